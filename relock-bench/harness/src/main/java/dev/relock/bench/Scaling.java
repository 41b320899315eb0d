package dev.relock.bench;

import dev.relock.RelockClient;
import dev.relock.RelockClientBuilder;
import dev.relock.testredis.RedisBinary;
import dev.relock.testredis.RedisCluster;
import dev.relock.testredis.RedisNodes;
import dev.relock.testredis.RedisSentinelGroup;
import dev.relock.testredis.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.Lock;

/**
 * Scaling past one Redis (issue 41): what a fleet of clients costs the servers, measured on private loopback servers
 * this class starts and stops. Four measurements, each a count more than a timing, so that a loaded machine moves
 * them little (the hand-off times and CPU figures excepted, and said so in the report):
 * <ul>
 *   <li>{@link #connections}: connections a client keeps open on each server of each topology, relock's and (on one
 *       server) every peer's;</li>
 *   <li>{@link #crowd}: many waiters on one lock across many clients;</li>
 *   <li>{@link #holders}: many held locks across many clients, renewed by their lease keepers;</li>
 *   <li>{@link #clusterSpread}: uncontended pairs over many names and contended ones over a few, on Clusters of 1 to
 *       3 masters.</li>
 * </ul>
 * Every relock client here uses defaults but its key prefix.
 */
final class Scaling {

    private static final String PREFIX = "bench-scale";
    private static final Duration JOIN = Duration.ofSeconds(60);

    private final boolean quick;

    Scaling(boolean quick) {
        this.quick = quick;
    }

    // ---- connections -----------------------------------------------------------------------------------------

    /**
     * Connections one client holds on one node, after two phases that two clients of the subject run against each
     * other: one lock and one wait in Redis each ("at rest"), then 16 threads each running pairs on locks of their
     * own ("after 16 threads"); the count is the two clients' increase over the node's count before they connected,
     * halved.
     */
    record ConnectionCount(String topology, String subject, String node, double atRest, double afterThreads,
            double afterClose) {
    }

    /** Every subject on one server, then relock on each other topology. */
    List<ConnectionCount> connections(List<Subject> subjects) throws Exception {
        List<ConnectionCount> counts = new ArrayList<>(connectionsOnOneServer(subjects));
        counts.addAll(relockConnectionsOnEachTopology());
        return counts;
    }

    List<ConnectionCount> connectionsOnOneServer(List<Subject> subjects) throws Exception {
        List<ConnectionCount> counts = new ArrayList<>();
        try (RedisServer server = RedisServer.start()) {
            for (Subject subject : subjects) {
                Progress.say("  connections: %s on one server", subject.label());
                try {
                    counts.addAll(countConnections("one server", subject.label(), Map.of("server", server),
                            () -> subject.connect(server.uri(), null), subject.waits()));
                } catch (Exception | LinkageError e) {
                    Progress.say("    failed: %s", Bench.describe(e));
                }
                server.flushAll();
            }
        }
        return counts;
    }

    /** relock on Sentinel, with the replication guard, on a Cluster and on Redlock. */
    List<ConnectionCount> relockConnectionsOnEachTopology() throws Exception {
        List<ConnectionCount> counts = new ArrayList<>();
        String relock = "relock " + Environment.relockVersion();
        try (RedisSentinelGroup group = RedisSentinelGroup.builder().replicas(1).start()) {
            Map<String, RedisServer> nodes = new LinkedHashMap<>();
            nodes.put("master", group.master());
            nodes.put("replica", group.replicas().get(0));
            for (int i = 0; i < group.sentinels().size(); i++) {
                nodes.put("sentinel " + (i + 1), group.sentinels().get(i));
            }
            Progress.say("  connections: relock on Sentinel");
            counts.addAll(countConnections("Sentinel", relock, nodes,
                    () -> relock(RelockClient.builder().redisUri(group.sentinelUri())), true));
            Progress.say("  connections: relock with the replication guard");
            Map<String, RedisServer> guarded = new LinkedHashMap<>();
            guarded.put("master", group.master());
            guarded.put("replica", group.replicas().get(0));
            counts.addAll(countConnections("one master, one replica, replication guard", relock, guarded,
                    () -> relock(RelockClient.builder().redisUri(group.master().uri())
                            .replicationGuard(1, Duration.ofMillis(300))), true));
        }
        try (RedisCluster cluster = RedisCluster.builder().masters(3).replicasPerMaster(1).start()) {
            Map<String, RedisServer> nodes = new LinkedHashMap<>();
            for (int i = 0; i < cluster.masters().size(); i++) {
                nodes.put("master " + (i + 1), cluster.masters().get(i));
                nodes.put("replica " + (i + 1), cluster.replicaOf(cluster.masters().get(i)));
            }
            Progress.say("  connections: relock on a Cluster of 3 masters");
            counts.addAll(countConnections("Cluster, 3 masters with a replica each", relock, nodes,
                    () -> relock(RelockClient.builder().redisClusterUris(cluster.seedUri())), true));
        }
        try (RedisNodes redlock = RedisNodes.start(5)) {
            Map<String, RedisServer> nodes = new LinkedHashMap<>();
            for (int i = 0; i < redlock.size(); i++) {
                nodes.put("node " + (i + 1), redlock.node(i));
            }
            Progress.say("  connections: relock on Redlock over 5 servers");
            counts.addAll(countConnections("Redlock over 5 servers", relock, nodes,
                    () -> relock(RelockClient.builder().redlockUris(redlock.uris())), true));
        }
        return counts;
    }

    private interface Connector {
        Subject.Client connect() throws Exception;
    }

    private List<ConnectionCount> countConnections(String topology, String subject, Map<String, RedisServer> nodes,
            Connector connector, boolean waits) throws Exception {
        Map<String, Integer> before = clientCounts(nodes);
        Map<String, Integer> atRest;
        Map<String, Integer> afterThreads;
        try (Subject.Client first = connector.connect(); Subject.Client second = connector.connect()) {
            for (int name = 0; name < 6; name++) {
                // six names: on a Cluster, every master has some
                String lock = "conn-" + name;
                pair(first.lock(lock));
                pair(second.lock(lock));
            }
            if (waits) {
                waitInRedis(first, second, "conn-wait");
                waitInRedis(second, first, "conn-wait");
            }
            atRest = clientCounts(nodes);
            threads(first, "conn-a");
            threads(second, "conn-b");
            afterThreads = clientCounts(nodes);
        }
        Map<String, Integer> afterClose = settledCounts(nodes, before);
        List<ConnectionCount> counts = new ArrayList<>();
        for (String node : nodes.keySet()) {
            int base = before.get(node);
            counts.add(new ConnectionCount(topology, subject, node, (atRest.get(node) - base) / 2.0,
                    (afterThreads.get(node) - base) / 2.0, (afterClose.get(node) - base) / 2.0));
        }
        return counts;
    }

    /** {@code holder} takes {@code name}; a thread of {@code waiter} waits for it (in Redis: another client); both let go. */
    private static void waitInRedis(Subject.Client holder, Subject.Client waiter, String name) throws Exception {
        Lock held = holder.lock(name);
        held.lock();
        CountDownLatch entered = new CountDownLatch(1);
        Thread thread = new Thread(() -> {
            Lock lock = waiter.lock(name);
            lock.lock();
            entered.countDown();
            lock.unlock();
        }, "scale-waiter");
        thread.setDaemon(true);
        thread.start();
        // the waiter is parked (waiting for a message) or polling (sleeping between tries): in Redis's hands either way
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (thread.getState() == Thread.State.RUNNABLE || thread.getState() == Thread.State.NEW) {
            if (System.nanoTime() - deadline > 0) {
                break;
            }
            Thread.sleep(5);
        }
        Thread.sleep(200); // a polling peer has tried a few times by now
        held.unlock();
        if (!entered.await(JOIN.toSeconds(), TimeUnit.SECONDS)) {
            throw new IllegalStateException("the waiter on " + name + " never got the lock");
        }
        thread.join(JOIN.toMillis());
    }

    private void threads(Subject.Client client, String names) throws Exception {
        int pairs = quick ? 50 : 300;
        List<Thread> threads = new ArrayList<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        for (int t = 0; t < 16; t++) {
            Lock lock = client.lock(names + "-" + t);
            Thread thread = new Thread(() -> {
                try {
                    for (int i = 0; i < pairs; i++) {
                        pair(lock);
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }, "scale-" + names + "-" + t);
            threads.add(thread);
            thread.start();
        }
        for (Thread thread : threads) {
            thread.join(JOIN.toMillis());
        }
        if (failure.get() != null) {
            throw new IllegalStateException("16 threads of pairs failed", failure.get());
        }
    }

    private static void pair(Lock lock) {
        lock.lock();
        lock.unlock();
    }

    private static Map<String, Integer> clientCounts(Map<String, RedisServer> nodes) {
        Map<String, Integer> counts = new LinkedHashMap<>();
        nodes.forEach((name, node) -> counts.put(name, (int) node.execute("CLIENT", "LIST").lines().count()));
        return counts;
    }

    /** The counts once closed connections are gone from the servers (a closing client's lag), at most 5 s later. */
    private static Map<String, Integer> settledCounts(Map<String, RedisServer> nodes, Map<String, Integer> before)
            throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (true) {
            Map<String, Integer> now = clientCounts(nodes);
            if (now.equals(before) || System.nanoTime() - deadline > 0) {
                return now;
            }
            Thread.sleep(50);
        }
    }

    private static Subject.Client relock(RelockClientBuilder builder) {
        RelockClient client = builder.keyPrefix(PREFIX).build();
        return new Subject.Client() {
            @Override
            public Lock lock(String name) {
                return client.lock(name);
            }

            @Override
            public void close() {
                client.close();
            }
        };
    }

    // ---- many waiters ------------------------------------------------------------------------------------------

    /**
     * One lock, its holder in a client of its own, and {@code threads} waiting threads spread evenly over
     * {@code clients} clients; once the holder lets go each waiter enters, leaves at once, and the next follows.
     *
     * @param queuedInRedis the waiters in Redis's queue: one per client, the others wait in their client's local line
     * @param memoryBytes what the lock's keys take in Redis while they all wait (MEMORY USAGE)
     * @param subscribedConnections connections subscribed to anything, over all clients
     * @param channels channels subscribed, over all clients
     * @param sameClient hand-off times (µs) from one holder's call of unlock to the next's entry in the same client
     * @param acrossClients the same where the next holder is in another client
     * @param drainSeconds from the holder's unlock to the last waiter's exit
     * @param cpuMicrosPerHandoff Redis CPU per hand-off while they drained
     * @param commandsPerHandoff commands Redis ran per hand-off (scripts' calls included) while they drained
     */
    record Crowd(int clients, int threads, int queuedInRedis, long memoryBytes, int subscribedConnections,
            int channels, double[] sameClient, double[] acrossClients, double drainSeconds,
            double cpuMicrosPerHandoff, double commandsPerHandoff) {
    }

    Crowd crowd(int clientCount, int threadsPerClient) throws Exception {
        int threads = clientCount * threadsPerClient;
        Progress.say("  crowd: %,d waiters on one lock across %d clients", threads, clientCount);
        try (RedisServer server = RedisServer.start()) {
            ServerStats stats = new ServerStats(server);
            List<RelockClient> clients = new ArrayList<>();
            try (RelockClient holder = RelockClient.builder().redisUri(server.uri()).keyPrefix(PREFIX).build()) {
                for (int c = 0; c < clientCount; c++) {
                    RelockClient client = RelockClient.builder().redisUri(server.uri()).keyPrefix(PREFIX).build();
                    clients.add(client);
                    pair(client.lock("warm-up"));
                }
                Lock held = holder.lock("crowd");
                held.lock();
                long[] enter = new long[threads];
                long[] leave = new long[threads];
                long[] exit = new long[threads];
                int[] clientOf = new int[threads];
                AtomicInteger order = new AtomicInteger();
                CountDownLatch done = new CountDownLatch(threads);
                List<Thread> waiting = new ArrayList<>();
                for (int c = 0; c < clientCount; c++) {
                    RelockClient client = clients.get(c);
                    int index = c;
                    for (int t = 0; t < threadsPerClient; t++) {
                        Thread thread = new Thread(() -> {
                            Lock lock = client.lock("crowd");
                            lock.lock();
                            int at = order.getAndIncrement();
                            enter[at] = System.nanoTime();
                            clientOf[at] = index;
                            leave[at] = System.nanoTime();
                            lock.unlock();
                            exit[at] = System.nanoTime();
                            done.countDown();
                        }, "crowd-" + c + "-" + t);
                        thread.setDaemon(true);
                        waiting.add(thread);
                        thread.start();
                    }
                }
                awaitParked(waiting);
                int queued = holder.inspect("crowd").waiters();
                long memory = keysMemory(server, PREFIX + ":{crowd}*");
                int[] subscriptions = subscriptions(server);
                double cpuBefore = stats.cpuSeconds();
                long commandsBefore = stats.totalCalls();
                long start = System.nanoTime();
                held.unlock();
                if (!done.await(JOIN.toSeconds() * 3, TimeUnit.SECONDS)) {
                    throw new IllegalStateException(done.getCount() + " waiters never entered");
                }
                double cpu = stats.cpuSeconds() - cpuBefore;
                long commands = stats.totalCalls() - commandsBefore;
                double drain = (exit[threads - 1] - start) / 1e9;
                List<Double> same = new ArrayList<>();
                List<Double> across = new ArrayList<>();
                for (int i = 1; i < threads; i++) {
                    double micros = (enter[i] - leave[i - 1]) / 1e3;
                    (clientOf[i] == clientOf[i - 1] ? same : across).add(micros);
                }
                return new Crowd(clientCount, threads, queued, memory, subscriptions[0], subscriptions[1],
                        same.stream().mapToDouble(Double::doubleValue).toArray(),
                        across.stream().mapToDouble(Double::doubleValue).toArray(), drain, cpu * 1e6 / threads,
                        (double) commands / threads);
            } finally {
                clients.forEach(RelockClient::close);
            }
        }
    }

    /** Waits until every thread is parked (waiting for its turn), at most a minute. */
    private static void awaitParked(List<Thread> threads) throws InterruptedException {
        long deadline = System.nanoTime() + JOIN.toNanos();
        int stable = 0;
        while (stable < 3) {
            boolean parked = threads.stream().allMatch(thread -> thread.getState() == Thread.State.WAITING
                    || thread.getState() == Thread.State.TIMED_WAITING);
            stable = parked ? stable + 1 : 0;
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("waiters still starting after " + JOIN);
            }
            Thread.sleep(100);
        }
    }

    /** Connections subscribed to anything, and the channels they hold, from CLIENT LIST. */
    private static int[] subscriptions(RedisServer server) {
        int connections = 0;
        int channels = 0;
        for (String line : server.execute("CLIENT", "LIST").lines().toList()) {
            int here = field(line, "sub") + field(line, "psub") + field(line, "ssub");
            if (here > 0) {
                connections++;
                channels += here;
            }
        }
        return new int[] {connections, channels};
    }

    private static int field(String clientLine, String name) {
        for (String part : clientLine.split(" ")) {
            if (part.startsWith(name + "=")) {
                return Integer.parseInt(part.substring(name.length() + 1));
            }
        }
        return 0;
    }

    /**
     * The bytes MEMORY USAGE gives for the keys matching {@code pattern}: the data alone, where used_memory would count
     * the clients' buffers too (and move with them).
     */
    private static long keysMemory(RedisServer server, String pattern) {
        String reply = server.execute("KEYS", pattern);
        String list = reply.substring(1, reply.length() - 1);
        long bytes = 0;
        for (String key : list.isEmpty() ? new String[0] : list.split(", ")) {
            String usage = server.execute("MEMORY", "USAGE", key);
            bytes += usage == null ? 0 : Long.parseLong(usage);
        }
        return bytes;
    }

    // ---- many holders ------------------------------------------------------------------------------------------

    /**
     * {@code clients × locksPerClient} locks held at once (one thread per client took its client's), with the default
     * lease, watched for {@code window}.
     *
     * @param memoryBytesPerLock what the locks' keys take in Redis while they are held (MEMORY USAGE), per lock
     * @param commandsPerSecond commands Redis ran per second in the window (scripts' calls included)
     * @param scriptCallsPerSecond of those, EVALSHA and EVAL calls
     * @param bytesInPerSecond bytes Redis read from clients per second
     * @param bytesOutPerSecond bytes it wrote to them per second
     * @param cpuShare Redis CPU in the window over its length
     * @param lost leases the clients reported lost (should be 0)
     */
    record Holders(int clients, int locks, Duration lease, double windowSeconds, double memoryBytesPerLock,
            double commandsPerSecond, double scriptCallsPerSecond, double bytesInPerSecond, double bytesOutPerSecond,
            double cpuShare, long lost) {
    }

    Holders holders(int clientCount, int locksPerClient, Duration window) throws Exception {
        int total = clientCount * locksPerClient;
        Progress.say("  holders: %,d locks held across %d clients, watched for %.1f s", total, clientCount,
                window.toMillis() / 1e3);
        try (RedisServer server = RedisServer.start()) {
            ServerStats stats = new ServerStats(server);
            List<RelockClient> clients = new ArrayList<>();
            LongAdder lost = new LongAdder();
            CountDownLatch holding = new CountDownLatch(clientCount);
            CountDownLatch release = new CountDownLatch(1);
            AtomicReference<Throwable> failure = new AtomicReference<>();
            List<Thread> threads = new ArrayList<>();
            try {
                for (int c = 0; c < clientCount; c++) {
                    RelockClient client = RelockClient.builder().redisUri(server.uri()).keyPrefix(PREFIX)
                            .leaseLostListener(event -> lost.increment()).build();
                    clients.add(client);
                    pair(client.lock("warm-up"));
                }
                for (int c = 0; c < clientCount; c++) {
                    RelockClient client = clients.get(c);
                    int index = c;
                    Thread thread = new Thread(() -> holdAll(client, index, locksPerClient, holding, release, failure),
                            "holder-" + c);
                    thread.setDaemon(true);
                    threads.add(thread);
                    thread.start();
                }
                if (!holding.await(JOIN.toSeconds() * 2, TimeUnit.SECONDS) || failure.get() != null) {
                    throw new IllegalStateException("not every lock was taken", failure.get());
                }
                double memory = (double) keysMemory(server, PREFIX + ":{held-*") / total;
                // the first renewal pass of every client runs a third of a lease after its locks were taken
                Map<String, String> before = ServerStats.fields(server.execute("INFO", "stats"));
                Map<String, Long> callsBefore = stats.commandCalls();
                double cpuBefore = stats.cpuSeconds();
                long start = System.nanoTime();
                Thread.sleep(window.toMillis()); // the length of the window: what is measured is what Redis did in it
                double seconds = (System.nanoTime() - start) / 1e9;
                double cpu = stats.cpuSeconds() - cpuBefore;
                Map<String, Long> callsAfter = stats.commandCalls();
                Map<String, String> after = ServerStats.fields(server.execute("INFO", "stats"));
                long commands = ServerStats.total(callsAfter) - ServerStats.total(callsBefore);
                long scripts = 0;
                for (String script : List.of("evalsha", "eval")) {
                    scripts += callsAfter.getOrDefault(script, 0L) - callsBefore.getOrDefault(script, 0L);
                }
                return new Holders(clientCount, total, Duration.ofSeconds(30), seconds, memory, commands / seconds,
                        scripts / seconds, delta(before, after, "total_net_input_bytes") / seconds,
                        delta(before, after, "total_net_output_bytes") / seconds, cpu / seconds, lost.sum());
            } finally {
                release.countDown();
                for (Thread thread : threads) {
                    thread.join(JOIN.toMillis());
                }
                clients.forEach(RelockClient::close);
            }
        }
    }

    private static void holdAll(RelockClient client, int index, int count, CountDownLatch holding,
            CountDownLatch release, AtomicReference<Throwable> failure) {
        List<Lock> held = new ArrayList<>();
        try {
            for (int i = 0; i < count; i++) {
                Lock lock = client.lock("held-" + index + "-" + i);
                lock.lock();
                held.add(lock);
            }
            holding.countDown();
            release.await();
        } catch (Throwable e) {
            failure.compareAndSet(null, e);
            holding.countDown();
        } finally {
            held.forEach(Lock::unlock);
        }
    }

    private static double delta(Map<String, String> before, Map<String, String> after, String field) {
        return Double.parseDouble(after.getOrDefault(field, "0")) - Double.parseDouble(before.getOrDefault(field, "0"));
    }

    // ---- Cluster -----------------------------------------------------------------------------------------------

    /**
     * One Cluster size on one server version.
     *
     * @param cpuMicrosPerPair per master: its Redis CPU over the uncontended pairs its slots served
     * @param commandsPerPair per master: commands it ran (scripts' calls included) per such pair
     * @param pairsPerSecond the uncontended pairs of 16 threads over 512 names, all masters together
     * @param messagesPerRelease per node: pub/sub messages it took in over the cluster bus per contended release
     * @param publishesPerRelease all masters: PUBLISH and SPUBLISH calls per contended release
     */
    record ClusterSize(String redisVersion, int masters, double[] cpuMicrosPerPair, double[] commandsPerPair,
            double pairsPerSecond, double[] messagesPerRelease, double publishesPerRelease) {
    }

    List<ClusterSize> clusterSpread(List<RedisBinary> binaries) throws Exception {
        List<ClusterSize> sizes = new ArrayList<>();
        for (RedisBinary binary : binaries) {
            for (int masters = 1; masters <= 3; masters++) {
                Progress.say("  cluster: %d master(s), Redis %s", masters, binary.version());
                try (RedisCluster cluster = RedisCluster.builder().binary(binary).masters(masters).start()) {
                    sizes.add(clusterSize(cluster, binary.version()));
                }
            }
        }
        return sizes;
    }

    private ClusterSize clusterSize(RedisCluster cluster, String version) throws Exception {
        List<RedisServer> masters = cluster.masters();
        int count = masters.size();
        Duration run = quick ? Duration.ofSeconds(3) : Duration.ofSeconds(15);
        try (RelockClient client = RelockClient.builder().redisClusterUris(cluster.seedUri()).keyPrefix(PREFIX)
                .build()) {
            // uncontended: 16 threads, 32 names each; each pair is counted on the master of its name's slot
            List<String> names = new ArrayList<>();
            for (int i = 0; i < 16 * 32; i++) {
                names.add("spread-" + i);
            }
            int[] masterOf = new int[names.size()];
            for (int i = 0; i < names.size(); i++) {
                masterOf[i] = masters.indexOf(cluster.masterFor(PREFIX + ":{" + names.get(i) + "}"));
            }
            names.forEach(name -> pair(client.lock(name)));
            long[][] pairs = new long[16][count];
            double[] cpuBefore = cpu(masters);
            long[] callsBefore = calls(masters);
            long start = System.nanoTime();
            runThreads(16, run, (thread, stop) -> {
                int i = 0;
                while (!stop.get()) {
                    int name = thread * 32 + (i++ % 32);
                    pair(client.lock(names.get(name)));
                    pairs[thread][masterOf[name]]++;
                }
            });
            double seconds = (System.nanoTime() - start) / 1e9;
            double[] cpuAfter = cpu(masters);
            long[] callsAfter = calls(masters);
            double[] cpuPerPair = new double[count];
            double[] commandsPerPair = new double[count];
            long all = 0;
            for (int m = 0; m < count; m++) {
                long onMaster = 0;
                for (long[] thread : pairs) {
                    onMaster += thread[m];
                }
                all += onMaster;
                cpuPerPair[m] = (cpuAfter[m] - cpuBefore[m]) * 1e6 / Math.max(1, onMaster);
                commandsPerPair[m] = (double) (callsAfter[m] - callsBefore[m]) / Math.max(1, onMaster);
            }

            // contended: two clients, 8 threads each, over 8 names each thread shares with one of the other's
            try (RelockClient other = RelockClient.builder().redisClusterUris(cluster.seedUri()).keyPrefix(PREFIX)
                    .build()) {
                List<RedisServer> nodes = cluster.nodes();
                double[] messagesBefore = publishMessagesReceived(nodes);
                long publishesBefore = publishes(masters);
                LongAdder releases = new LongAdder();
                runThreads(16, run, (thread, stop) -> {
                    Lock lock = (thread % 2 == 0 ? client : other).lock("shared-" + thread / 2);
                    while (!stop.get()) {
                        pair(lock);
                        releases.increment();
                    }
                });
                double[] messagesAfter = publishMessagesReceived(nodes);
                long published = publishes(masters) - publishesBefore;
                double[] perRelease = new double[nodes.size()];
                for (int n = 0; n < nodes.size(); n++) {
                    perRelease[n] = (messagesAfter[n] - messagesBefore[n]) / Math.max(1, releases.sum());
                }
                return new ClusterSize(version, count, cpuPerPair, commandsPerPair, all / seconds, perRelease,
                        (double) published / Math.max(1, releases.sum()));
            }
        }
    }

    private interface Worker {
        void run(int thread, AtomicBoolean stop) throws Exception;
    }

    private static void runThreads(int count, Duration run, Worker worker) throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < count; t++) {
            int index = t;
            Thread thread = new Thread(() -> {
                try {
                    worker.run(index, stop);
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }, "scale-cluster-" + t);
            threads.add(thread);
            thread.start();
        }
        Thread.sleep(run.toMillis()); // the length of the run
        stop.set(true);
        for (Thread thread : threads) {
            thread.join(JOIN.toMillis());
        }
        if (failure.get() != null) {
            throw new IllegalStateException("a worker failed", failure.get());
        }
    }

    private static double[] cpu(List<RedisServer> nodes) {
        return nodes.stream().mapToDouble(node -> new ServerStats(node).cpuSeconds()).toArray();
    }

    private static long[] calls(List<RedisServer> nodes) {
        return nodes.stream().mapToLong(node -> new ServerStats(node).totalCalls()).toArray();
    }

    private static long publishes(List<RedisServer> masters) {
        long total = 0;
        for (RedisServer master : masters) {
            Map<String, Long> calls = new ServerStats(master).commandCalls();
            total += calls.getOrDefault("publish", 0L) + calls.getOrDefault("spublish", 0L);
        }
        return total;
    }

    /** Pub/sub messages each node took in over the cluster bus (CLUSTER INFO), plain and sharded. */
    private static double[] publishMessagesReceived(List<RedisServer> nodes) {
        double[] received = new double[nodes.size()];
        for (int n = 0; n < nodes.size(); n++) {
            Map<String, String> info = ServerStats.fields(nodes.get(n).execute("CLUSTER", "INFO"));
            received[n] = Double.parseDouble(info.getOrDefault("cluster_stats_messages_publish_received", "0"))
                    + Double.parseDouble(info.getOrDefault("cluster_stats_messages_publishshard_received", "0"));
        }
        return received;
    }

    /** The versions to run the Cluster part on: the resolved binary, and the embedded 6.2 where it differs. */
    static List<RedisBinary> clusterBinaries() {
        RedisBinary resolved = RedisBinary.resolve();
        List<RedisBinary> binaries = new ArrayList<>(List.of(resolved));
        if (RedisBinary.embeddedRunsHere()) {
            RedisBinary embedded = RedisBinary.embedded();
            if (!embedded.version().equals(resolved.version())) {
                binaries.add(embedded);
            }
        }
        return binaries;
    }
}
