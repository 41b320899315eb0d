package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;

import dev.relock.fencing.RedisFence;
import dev.relock.testredis.RedisServer;
import dev.relock.testredis.TcpProxy;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The chaos suite (issue 12, part 5): five clients contend for an exclusive lock and a read-write lock on one Redis,
 * four of them behind a {@link TcpProxy} (two on relock's own Lettuce client, two on a caller's with Lettuce's default
 * options) that, at random (seeded; the seed is printed, and {@code -Drelock.chaos.seed=} replays it), delays replies
 * past the command timeout, loses a reply and resets or closes the connection (a caller's client then sends the
 * command again), cuts connections, and black-holes the link, sometimes for longer than a lease; half of the faults
 * hit one of a client's connections only (commands late while wake-ups come on time, or the reverse). Every critical
 * section re-enters its lock and releases that re-entry
 * inside, checks exclusion in memory, and writer sections write to a fenced register ({@link RedisFence} on a Redis no
 * fault touches).
 *
 * <p>What must hold: no critical section starts while another holder is inside that had not been told its lease was
 * lost (a told holder is excused: the lease ended, which fencing tokens expose; those overlaps are counted), and the
 * fenced register accepts tokens in rising order only. The run lasts {@code -Drelock.chaos.seconds} (90 by default:
 * CI; the reliability campaign runs it for hours) and prints its counts: critical sections, faults by kind,
 * exceptions by type, lost leases, overlaps. {@code -Drelock.chaos.monitor=FILE} records every command the server
 * ran, to trace an overlap back to the scripts behind it.
 */
@Tag("redis")
class ChaosTest {

    private static final Duration LEASE = Duration.ofMillis(1_500);
    private static final Duration COMMAND_TIMEOUT = Duration.ofMillis(300);
    private static final String EXCLUSIVE = "chaos-lock";
    private static final String READ_WRITE = "chaos-rw";

    private final Map<String, AtomicInteger> faults = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> exceptions = new ConcurrentHashMap<>();
    private final AtomicInteger sections = new AtomicInteger();
    private final AtomicInteger readSections = new AtomicInteger();
    private final AtomicInteger unexcusedOverlaps = new AtomicInteger();
    private final AtomicInteger excusedOverlaps = new AtomicInteger();
    private final AtomicInteger leasesLost = new AtomicInteger();
    private final AtomicInteger fencedAccepted = new AtomicInteger();
    private final AtomicInteger fencedRefused = new AtomicInteger();
    // overlaps found, and the first message of each kind of exception, printed at the end
    private final List<String> violations = Collections.synchronizedList(new ArrayList<>());
    // per lock name, who is inside now; each check and change is made under the set's monitor
    private final Map<String, Set<Inside>> inside = new ConcurrentHashMap<>();

    /** A holder inside its critical section; {@code told} is set when its client tells it the lease was lost. */
    private record Inside(String who, boolean writer, long token, AtomicBoolean told) {
    }

    @Test
    void noTwoHoldersUnderSlowCutAndReplayedConnections() throws Exception {
        long seed = Long.getLong("relock.chaos.seed", System.nanoTime());
        Duration run = Duration.ofSeconds(Long.getLong("relock.chaos.seconds", 90));
        System.out.println("ChaosTest seed " + seed + " (replay with -Drelock.chaos.seed=" + seed + "), run " + run);
        Random random = new Random(seed);
        List<AutoCloseable> closing = new ArrayList<>();
        try (RedisServer redis = RedisServer.start(); RedisServer fenceRedis = RedisServer.start()) {
            String monitorFile = System.getProperty("relock.chaos.monitor");
            if (monitorFile != null) {
                closing.add(recordCommands(redis, Path.of(monitorFile)));
            }
            List<TcpProxy> proxies = new ArrayList<>();
            List<RelockClient> clients = new ArrayList<>();
            clients.add(client(redis.uri()));
            for (int i = 0; i < 4; i++) {
                TcpProxy proxy = TcpProxy.to(redis);
                proxies.add(proxy);
                closing.add(proxy);
                if (i < 2) {
                    clients.add(client(proxy.uri()));
                } else {
                    // a caller's Lettuce client on its default options: commands in flight are sent again after a
                    // reconnect
                    RedisClient callers = RedisClient.create(proxy.uri());
                    closing.add(callers::shutdown);
                    clients.add(RelockClient.builder().redisClient(callers).defaultLease(LEASE)
                            .commandTimeout(COMMAND_TIMEOUT).leaseLostListener(event -> leasesLost.incrementAndGet())
                            .build());
                }
            }
            for (int c = 0; c < clients.size(); c++) {
                // owner ids in Redis start with their client's id
                System.out.println("ChaosTest c" + c + " is client " + clients.get(c).clientId());
            }
            clients.forEach(client -> closing.add(0, client));
            RedisClient fenceClient = RedisClient.create(fenceRedis.uri());
            closing.add(fenceClient::shutdown);
            StatefulRedisConnection<String, String> fenceConnection = fenceClient.connect();
            RedisFence fence = RedisFence.on(fenceConnection);

            long end = System.nanoTime() + run.toNanos();
            AtomicBoolean stop = new AtomicBoolean();
            List<Thread> workers = new ArrayList<>();
            CountDownLatch done = new CountDownLatch(clients.size() * 2);
            for (int c = 0; c < clients.size(); c++) {
                for (int t = 0; t < 2; t++) {
                    RelockClient client = clients.get(c);
                    long workerSeed = random.nextLong();
                    String who = "c" + c + "t" + t;
                    Thread worker = new Thread(() -> {
                        try {
                            work(client, who, new Random(workerSeed), fence, stop);
                        } finally {
                            done.countDown();
                        }
                    }, "chaos-" + who);
                    workers.add(worker);
                    worker.start();
                }
            }
            while (System.nanoTime() - end < 0) {
                injectFault(proxies.get(random.nextInt(proxies.size())), random);
                Thread.sleep(100 + random.nextInt(400)); // the pace of faults, not a wait for anything
            }
            proxies.forEach(proxy -> {
                proxy.heal();
                proxy.latency(Duration.ZERO);
            });
            stop.set(true);
            if (!done.await(60, TimeUnit.SECONDS)) {
                for (Thread worker : workers) {
                    if (worker.isAlive()) {
                        System.out.println("still running: " + worker.getName());
                        for (StackTraceElement frame : worker.getStackTrace()) {
                            System.out.println("    at " + frame);
                        }
                    }
                }
                for (RelockClient client : clients) {
                    System.out.println(client.clientId() + " holds " + client.heldLocks());
                }
                System.out.println(EXCLUSIVE + ": " + clients.get(0).inspect(EXCLUSIVE));
                System.out.println(READ_WRITE + ": " + clients.get(0).inspect(READ_WRITE));
                throw new AssertionError("workers still running 60 s after the faults ended (seed " + seed + ")");
            }
            fenceConnection.close();
        } finally {
            for (AutoCloseable closeable : closing) {
                try {
                    closeable.close();
                } catch (Exception e) {
                    System.out.println("closing " + closeable + " failed: " + e);
                }
            }
        }
        System.out.printf("ChaosTest seed %d: %d critical sections (%d reading), faults %s, exceptions %s,"
                        + " %d leases lost, %d overlaps of told holders, %d unexcused overlaps,"
                        + " fenced writes %d accepted, %d refused%n",
                seed, sections.get(), readSections.get(), new TreeMap<>(faults), new TreeMap<>(exceptions),
                leasesLost.get(), excusedOverlaps.get(), unexcusedOverlaps.get(), fencedAccepted.get(),
                fencedRefused.get());
        violations.stream().limit(20).forEach(System.out::println);
        assertThat(unexcusedOverlaps).as("critical sections entered beside a holder not told of a lost lease (seed %d)",
                seed).hasValue(0);
        // about 30 a second on a quiet 2-core machine; a third of that still shows the suite did its work, and
        // a fixed count would fail the shorter runs (30 s in CI's second pass gave 1,270)
        assertThat(sections.get()).as("critical sections in %s", run).isGreaterThanOrEqualTo(10 * (int) run.toSeconds());
        // a thread refused its write lock as an upgrade holds a read hold it gave up (a handle whose close failed
        // used to leave one); a plain RelockException is a failure nobody mapped to what it is
        assertThat(exceptions).as("exceptions that are bugs (seed %d)", seed)
                .doesNotContainKeys("IllegalMonitorStateException", "RelockException");
    }

    /**
     * Writes every command the server runs (its MONITOR stream: the client's address, and the calls scripts make)
     * to {@code file} until the returned socket is closed: how the overlap of seed 2204888643662 was traced. For
     * diagnosis only ({@code -Drelock.chaos.monitor=FILE}); it slows the server down.
     */
    private static Socket recordCommands(RedisServer redis, Path file) throws IOException {
        Socket socket = new Socket(redis.host(), redis.port());
        socket.getOutputStream().write("MONITOR\r\n".getBytes(StandardCharsets.US_ASCII));
        socket.getOutputStream().flush();
        Thread recorder = new Thread(() -> {
            try (InputStream in = socket.getInputStream(); OutputStream out = Files.newOutputStream(file)) {
                in.transferTo(out);
            } catch (IOException e) {
                // the socket was closed at the end of the run
            }
        }, "chaos-monitor");
        recorder.setDaemon(true);
        recorder.start();
        return socket;
    }

    private RelockClient client(String uri) {
        return RelockClient.builder().redisUri(uri).defaultLease(LEASE).commandTimeout(COMMAND_TIMEOUT)
                .leaseLostListener(event -> leasesLost.incrementAndGet()).build();
    }

    /**
     * One fault on one proxy, for a random while; returns when it is over (or was a one-off). Half of the faults
     * hit one of the client's connections only (its commands or its wake-ups), as when one connection fails and
     * the others go on: replies late on the command connection while wake-ups arrive on time.
     */
    private void injectFault(TcpProxy proxy, Random random) throws InterruptedException {
        List<TcpProxy.Connection> connections = proxy.connections();
        if (!connections.isEmpty() && random.nextBoolean()) {
            TcpProxy.Connection one = connections.get(random.nextInt(connections.size()));
            switch (random.nextInt(4)) {
                case 0 -> {
                    count(faults, "late replies on one connection");
                    one.replyLatency(COMMAND_TIMEOUT.plusMillis(random.nextInt(400)));
                    Thread.sleep(200 + random.nextInt(800)); // how long the fault lasts
                    one.replyLatency(Duration.ZERO);
                }
                case 1 -> {
                    count(faults, "lost reply + reset on one connection");
                    one.loseNextReplyAndReset();
                }
                case 2 -> {
                    count(faults, "lost reply + close on one connection");
                    one.loseNextReplyAndClose();
                }
                default -> {
                    count(faults, "one connection reset");
                    one.reset();
                }
            }
            return;
        }
        switch (random.nextInt(5)) {
            case 0 -> {
                count(faults, "late replies");
                proxy.replyLatency(COMMAND_TIMEOUT.plusMillis(50 + random.nextInt(300)));
                Thread.sleep(200 + random.nextInt(800)); // how long the fault lasts
                proxy.replyLatency(Duration.ZERO);
            }
            case 1 -> {
                count(faults, "lost reply + reset");
                proxy.loseNextReplyAndReset();
            }
            case 2 -> {
                count(faults, "lost reply + close");
                proxy.loseNextReplyAndClose();
            }
            case 3 -> {
                count(faults, "cut");
                proxy.cutConnections();
            }
            default -> {
                count(faults, "black hole");
                proxy.blackhole();
                // sometimes past the lease: the holder must be told before anybody else gets in
                Thread.sleep(200 + random.nextInt(2_000));
                proxy.heal();
            }
        }
    }

    private void work(RelockClient client, String who, Random random, RedisFence fence, AtomicBoolean stop) {
        while (!stop.get()) {
            int pick = random.nextInt(3);
            String name = pick == 0 ? EXCLUSIVE : READ_WRITE;
            boolean writer = pick != 2;
            RelockLock lock = pick == 0 ? client.lock(name)
                    : writer ? client.readWriteLock(name).writeLock() : client.readWriteLock(name).readLock();
            try {
                // half wait without a deadline (retrying through faults), half with one
                Optional<LockHandle> taken = random.nextBoolean() ? Optional.of(lock.acquire())
                        : lock.tryAcquire(Duration.ofSeconds(2));
                if (taken.isEmpty()) {
                    count(exceptions, "timed out waiting");
                    continue;
                }
                try (LockHandle held = taken.get()) {
                    criticalSection(lock, name, who, writer, held, random, fence);
                }
            } catch (RuntimeException e) {
                if (count(exceptions, e.getClass().getSimpleName()) == 1) {
                    violations.add("first " + e); // not a violation: what each kind of exception said, once
                    if (e.getClass() == IllegalMonitorStateException.class || e.getClass() == RelockException.class) {
                        // a bug (see the assertion at the end): where it came from
                        e.printStackTrace(System.out);
                        System.out.println(who + " holds " + client.heldLocks());
                    }
                }
                pause(random); // a client cut off fails at once: no busy loop
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private void criticalSection(RelockLock lock, String name, String who, boolean writer, LockHandle held,
            Random random, RedisFence fence) throws InterruptedException {
        AtomicBoolean told = new AtomicBoolean();
        held.whenLost().thenRun(() -> told.set(true));
        Inside me = new Inside(who, writer, held.fencingToken(), told);
        Set<Inside> here = inside.computeIfAbsent(name, k -> ConcurrentHashMap.newKeySet());
        synchronized (here) {
            for (Inside other : here) {
                if (writer || other.writer()) {
                    if (other.told().get()) {
                        excusedOverlaps.incrementAndGet();
                    } else {
                        unexcusedOverlaps.incrementAndGet();
                        violations.add(who + " (token " + held.fencingToken() + ") entered " + name + " beside "
                                + other.who() + " (token " + other.token() + "), who had not been told of a loss");
                    }
                }
            }
            here.add(me);
        }
        try {
            sections.incrementAndGet();
            if (!writer) {
                readSections.incrementAndGet();
            }
            // re-enter, and give the re-entry up inside
            try {
                lock.tryAcquire(Duration.ZERO).ifPresent(LockHandle::close);
            } catch (RuntimeException e) {
                count(exceptions, "re-entry: " + e.getClass().getSimpleName());
            }
            if (writer) {
                try {
                    if (fence.trySet("fenced:" + name, who, held.fencingToken())) {
                        fencedAccepted.incrementAndGet();
                    } else {
                        fencedRefused.incrementAndGet();
                    }
                } catch (RuntimeException e) {
                    count(exceptions, "fence: " + e.getClass().getSimpleName());
                }
            }
            // the work of the section: mostly short, now and then long enough for a fault to fall into it
            Thread.sleep(random.nextInt(100) == 0 ? 100 + random.nextInt(1_600) : random.nextInt(3));
        } finally {
            synchronized (here) {
                here.remove(me);
            }
        }
    }

    private static void pause(Random random) {
        try {
            Thread.sleep(10 + random.nextInt(40)); // on purpose: the pace of a worker between sections
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static int count(Map<String, AtomicInteger> counts, String what) {
        return counts.computeIfAbsent(what, k -> new AtomicInteger()).incrementAndGet();
    }
}
