package dev.relock.testredis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Collectors;

/**
 * A replicated master watched by three Redis Sentinels, all on loopback: a master, one or more replicas and three
 * sentinels, each a {@link RedisServer} in its own directory (sentinels rewrite their configuration file; every
 * sentinel has its own). Sentinels run the same redis-server binary with {@code --sentinel}.
 *
 * <pre>{@code
 * try (RedisSentinelGroup group = RedisSentinelGroup.start()) {
 *     RedisClient client = RedisClient.create(group.sentinelUri());  // redis-sentinel://127.0.0.1:p1,...#relock
 *     RedisServer before = group.master();
 *     RedisServer after = group.failover();    // SENTINEL FAILOVER; returns once every sentinel agrees
 *     RedisServer third = group.killMaster();  // SIGKILL the master; returns once a replica took over
 * }
 * }</pre>
 *
 * <p>What is true once {@link Builder#start()} returned: every replica is in sync with the master, and every
 * sentinel knows the master, every replica and the two other sentinels, so a failover can start at once. The
 * sentinels consider a master down after {@code down-after-milliseconds} (default 1000) without a valid reply, with
 * a quorum of 2; {@code failover-timeout} is 3000 ms by default. On Redis 7+ the sentinels' internal timers are
 * shortened with {@code SENTINEL DEBUG} (INFO every 250 ms, hello every 500 ms); Redis 6.2 has no such command,
 * so there the group takes longer to settle: about 10 s more for a former master to be demoted. Note that a sentinel that voted in a failover
 * starts no automatic failover of the same master for twice that timeout; {@link #failover()} is not subject to it.
 *
 * <p>The data nodes' roles move: {@link #master()} asks the sentinels who the master is now. A node keeps its
 * port and directory across restarts, and its configuration file as the sentinels last rewrote it, so a restarted
 * replica stays a replica of the current master; a restarted former master comes back as a master and is turned
 * into a replica by the sentinels within a few seconds ({@link #awaitReplicasInSync()}).
 *
 * <p>Methods may be called from any thread, but the waits assume one test drives the faults. {@link #close()}
 * closes sentinels first (so they do not react to the data nodes going away), then the data nodes.
 */
public final class RedisSentinelGroup implements AutoCloseable {

    /** The master name used unless {@link Builder#masterName(String)} sets another. */
    public static final String DEFAULT_MASTER_NAME = "relock";

    private static final int SENTINELS = 3;
    private static final int QUORUM = 2;
    private static final Duration SETTLE_TIMEOUT = Duration.ofSeconds(30);
    // longer than failover-timeout's default here (3 s), so a failover under way is not asked for again
    private static final Duration ASK_AGAIN = Duration.ofSeconds(8);
    /**
     * Sentinel timers for tests (Redis 7+): INFO every 250 ms instead of 10 s and hello messages every 500 ms
     * instead of 2 s, so sentinels find each other and notice role changes quickly; a former master is demoted
     * after 4 hello periods. Not saved in the configuration file: a restarted sentinel runs with the defaults.
     */
    private static final String[] FAST_SENTINEL_TIMERS =
            {"SENTINEL", "DEBUG", "info-period", "250", "publish-period", "500"};
    /** A write command that replicas refuse (READONLY) and that leaves no key behind. */
    private static final String[] WRITE_PROBE = {"DEL", "relock-fixture:write-probe"};

    private final String masterName;
    private final List<RedisServer> dataNodes;
    private final List<RedisServer> sentinels;

    private RedisSentinelGroup(String masterName, List<RedisServer> dataNodes, List<RedisServer> sentinels) {
        this.masterName = masterName;
        this.dataNodes = List.copyOf(dataNodes);
        this.sentinels = List.copyOf(sentinels);
    }

    /** A builder; nothing runs until {@link Builder#start()}. */
    public static Builder builder() {
        return new Builder();
    }

    /** Starts a master, one replica and three sentinels with the defaults. */
    public static RedisSentinelGroup start() {
        return builder().start();
    }

    /** The name the sentinels monitor the master under. */
    public String masterName() {
        return masterName;
    }

    /**
     * The sentinels in Lettuce's URI syntax: {@code redis-sentinel://127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3#name}.
     */
    public String sentinelUri() {
        return sentinels.stream().map(s -> s.host() + ":" + s.port())
                .collect(Collectors.joining(",", "redis-sentinel://", "#" + masterName));
    }

    /** The three sentinels, in start order; faults (kill, pause) may be applied to them as to any server. */
    public List<RedisServer> sentinels() {
        return sentinels;
    }

    /** The master and the replicas in start order (index 0 was the first master), whatever their roles now. */
    public List<RedisServer> dataNodes() {
        return dataNodes;
    }

    /**
     * The data node the sentinels name as master now (the first running, unpaused sentinel is asked).
     *
     * @throws IllegalStateException if no sentinel answers, or it names an address that is not one of ours
     */
    public RedisServer master() {
        RuntimeException lastFailure = null;
        for (RedisServer sentinel : sentinels) {
            if (!sentinel.isRunning() || sentinel.isPaused()) {
                continue;
            }
            try {
                return dataNodeOnPort(reportedMasterPort(sentinel));
            } catch (RuntimeException e) {
                lastFailure = e;
            }
        }
        throw new IllegalStateException("no sentinel of " + this + " names a master", lastFailure);
    }

    /** Every data node but {@link #master()}, in start order, running or not. */
    public List<RedisServer> replicas() {
        RedisServer master = master();
        return dataNodes.stream().filter(node -> node != master).toList();
    }

    /**
     * Asks a sentinel for a failover ({@code SENTINEL FAILOVER}) and waits until every running sentinel names
     * another master, that master accepts writes, and the former master, if running, replicates from it.
     *
     * @return the new master
     * @throws IllegalStateException if the sentinels refuse (e.g. no replica in sync) or do not finish within 30 s
     *     (scaled)
     */
    public RedisServer failover() {
        RedisServer previous = master();
        RedisServer sentinel = sentinels.stream().filter(s -> s.isRunning() && !s.isPaused()).findFirst()
                .orElseThrow(() -> new IllegalStateException("no sentinel of " + this + " is running"));
        Conditions.await("sentinel on port " + sentinel.port() + " to accept SENTINEL FAILOVER", SETTLE_TIMEOUT,
                () -> "OK".equals(sentinel.execute("SENTINEL", "FAILOVER", masterName)));
        // a manual failover that aborts (its replica not switched within failover-timeout) is not retried by
        // the sentinels themselves: ask again, every ASK_AGAIN, until one completes
        long[] askedAt = {System.nanoTime()};
        long askAgainNanos = TestTimeouts.scaled(ASK_AGAIN).toNanos();
        RedisServer[] found = new RedisServer[1];
        Conditions.await("the sentinels of " + this + " to fail over from port " + previous.port(), SETTLE_TIMEOUT,
                () -> {
                    RedisServer agreed = agreedMaster();
                    if (agreed != null && agreed != previous && acceptsWrites(agreed)) {
                        found[0] = agreed;
                        return true;
                    }
                    if (System.nanoTime() - askedAt[0] > askAgainNanos
                            && Conditions.flatArray(sentinel.execute("SENTINEL", "GET-MASTER-ADDR-BY-NAME", masterName))
                                    .contains(Integer.toString(previous.port()))) {
                        // this sentinel still names the old master: its failover did not happen
                        askedAt[0] = System.nanoTime();
                        // INPROG while one is under way; any refusal just means "not yet"
                        sentinel.execute("SENTINEL", "FAILOVER", masterName);
                    }
                    return false;
                });
        RedisServer next = found[0];
        if (previous.isRunning() && !previous.isPaused()) {
            Conditions.await("former master on port " + previous.port() + " to replicate from " + next.port(),
                    SETTLE_TIMEOUT, () -> replicatesFrom(previous, next));
        }
        return next;
    }

    /**
     * Kills the master with SIGKILL, as a crash, and waits for the sentinels to promote a replica (about
     * {@code down-after-milliseconds} plus an election).
     *
     * @return the new master
     * @throws IllegalStateException if no replica is promoted within 30 s (scaled)
     */
    public RedisServer killMaster() {
        RedisServer previous = master();
        previous.kill();
        return awaitMasterOtherThan(previous);
    }

    /**
     * Waits until every running, unpaused sentinel names one master other than {@code previous}, and that node
     * reports the master role and accepts a write.
     *
     * @return the new master
     * @throws IllegalStateException if that does not happen within 30 s (scaled)
     */
    public RedisServer awaitMasterOtherThan(RedisServer previous) {
        Objects.requireNonNull(previous, "previous");
        RedisServer[] found = new RedisServer[1];
        Conditions.await("the sentinels of " + this + " to agree on a master other than port " + previous.port(),
                SETTLE_TIMEOUT, () -> {
                    RedisServer agreed = agreedMaster();
                    if (agreed == null || agreed == previous || !acceptsWrites(agreed)) {
                        return false;
                    }
                    found[0] = agreed;
                    return true;
                });
        return found[0];
    }

    /**
     * Waits until every running, unpaused data node other than the master replicates from it with the link up,
     * e.g. after a former master was restarted.
     *
     * @throws IllegalStateException if that does not happen within 30 s (scaled)
     */
    public void awaitReplicasInSync() {
        Conditions.await("every replica of " + this + " to be in sync", SETTLE_TIMEOUT, () -> {
            RedisServer master = agreedMaster();
            if (master == null) {
                return false;
            }
            for (RedisServer node : dataNodes) {
                if (node != master && node.isRunning() && !node.isPaused() && !replicatesFrom(node, master)) {
                    return false;
                }
            }
            return true;
        });
    }

    /** Closes the sentinels, then the data nodes. Idempotent. */
    @Override
    public void close() {
        List<RedisServer> all = new ArrayList<>(sentinels);
        all.addAll(dataNodes);
        RedisServer.closeAll(all);
    }

    @Override
    public String toString() {
        return "RedisSentinelGroup[" + masterName + ", data " + ports(dataNodes) + ", sentinels " + ports(sentinels)
                + "]";
    }

    // ---- queries ----

    /** The master every running, unpaused sentinel names, or null while they disagree or none runs. */
    private RedisServer agreedMaster() {
        Integer agreed = null;
        for (RedisServer sentinel : sentinels) {
            if (!sentinel.isRunning() || sentinel.isPaused()) {
                continue;
            }
            int port = reportedMasterPort(sentinel);
            if (agreed != null && agreed != port) {
                return null;
            }
            agreed = port;
        }
        return agreed == null ? null : dataNodeOnPort(agreed);
    }

    private int reportedMasterPort(RedisServer sentinel) {
        List<String> address = Conditions.flatArray(
                sentinel.execute("SENTINEL", "GET-MASTER-ADDR-BY-NAME", masterName));
        return Integer.parseInt(address.get(1));
    }

    private RedisServer dataNodeOnPort(int port) {
        return dataNodes.stream().filter(node -> node.port() == port).findFirst()
                .orElseThrow(() -> new IllegalStateException("the sentinels name port " + port
                        + " as master, which is not a data node of " + this));
    }

    private static boolean acceptsWrites(RedisServer node) {
        if (!node.isRunning() || node.isPaused()) {
            return false;
        }
        node.execute(WRITE_PROBE); // a replica answers READONLY, which counts as "not yet"
        return "master".equals(Conditions.infoField(node.execute("INFO", "replication"), "role"));
    }

    private static boolean replicatesFrom(RedisServer replica, RedisServer master) {
        String info = replica.execute("INFO", "replication");
        return "slave".equals(Conditions.infoField(info, "role"))
                && String.valueOf(master.port()).equals(Conditions.infoField(info, "master_port"))
                && "up".equals(Conditions.infoField(info, "master_link_status"));
    }

    /** True once the sentinel knows the master, all replicas and the other sentinels. */
    private boolean knowsEverything(RedisServer sentinel) {
        List<String> fields = Conditions.flatArray(sentinel.execute("SENTINEL", "MASTER", masterName));
        String replicas = null;
        String otherSentinels = null;
        for (int i = 0; i + 1 < fields.size(); i += 2) {
            switch (fields.get(i)) {
                case "num-slaves" -> replicas = fields.get(i + 1);
                case "num-other-sentinels" -> otherSentinels = fields.get(i + 1);
                default -> { }
            }
        }
        return String.valueOf(dataNodes.size() - 1).equals(replicas)
                && String.valueOf(SENTINELS - 1).equals(otherSentinels);
    }

    private static String ports(List<RedisServer> servers) {
        return servers.stream().map(s -> String.valueOf(s.port())).collect(Collectors.joining(",", "[", "]"));
    }

    /** Options for a group. Not thread-safe; each {@link #start()} starts a new, independent group. */
    public static final class Builder {

        private final RedisServer.Builder dataNode = RedisServer.builder();
        private RedisBinary binary;
        private String masterName = DEFAULT_MASTER_NAME;
        private int replicas = 1;
        private Duration downAfter = Duration.ofMillis(1000);
        private Duration failoverTimeout = Duration.ofMillis(3000);

        private Builder() {
        }

        /** The executable for data nodes and sentinels; default {@link RedisBinary#resolve()}. */
        public Builder binary(RedisBinary binary) {
            this.binary = Objects.requireNonNull(binary, "binary");
            dataNode.binary(binary);
            return this;
        }

        /**
         * The name the sentinels monitor the master under; default {@value #DEFAULT_MASTER_NAME}.
         *
         * @throws IllegalArgumentException if empty or not made of letters, digits, '-', '_' and '.'
         */
        public Builder masterName(String masterName) {
            Objects.requireNonNull(masterName, "masterName");
            if (!masterName.matches("[A-Za-z0-9._-]+")) {
                throw new IllegalArgumentException("a master name must be letters, digits, '.', '_' or '-', was '"
                        + masterName + "'");
            }
            this.masterName = masterName;
            return this;
        }

        /**
         * How many replicas the master has; default 1.
         *
         * @throws IllegalArgumentException if less than 1 (a failover needs a replica) or more than 5
         */
        public Builder replicas(int replicas) {
            if (replicas < 1 || replicas > 5) {
                throw new IllegalArgumentException("replicas must be 1..5, was " + replicas);
            }
            this.replicas = replicas;
            return this;
        }

        /**
         * The sentinels' {@code down-after-milliseconds}: how long the master may not answer before it counts as
         * down; default 1 s. Not scaled by {@link TestTimeouts}.
         *
         * @throws IllegalArgumentException if not positive
         */
        public Builder downAfter(Duration downAfter) {
            this.downAfter = positive(downAfter, "downAfter");
            return this;
        }

        /**
         * The sentinels' {@code failover-timeout}; default 3 s. Not scaled by {@link TestTimeouts}.
         *
         * @throws IllegalArgumentException if not positive
         */
        public Builder failoverTimeout(Duration failoverTimeout) {
            this.failoverTimeout = positive(failoverTimeout, "failoverTimeout");
            return this;
        }

        /** Append-only file with {@code appendfsync always} on every data node; see {@link RedisServer.Builder#appendOnly}. */
        public Builder appendOnly(boolean appendOnly) {
            dataNode.appendOnly(appendOnly);
            return this;
        }

        /**
         * A redis.conf directive for every data node (not the sentinels); see {@link RedisServer.Builder#config}.
         * {@code replicaof} is set by the group.
         */
        public Builder config(String key, String value) {
            if ("replicaof".equalsIgnoreCase(key.trim()) || "slaveof".equalsIgnoreCase(key.trim())) {
                throw new IllegalArgumentException("'" + key + "' is set by the group");
            }
            dataNode.config(key, value);
            return this;
        }

        /**
         * Starts the master, the replicas and the sentinels, and returns once the replicas are in sync and every
         * sentinel knows the whole group (usually 1 to 3 s: sentinels find each other through hello messages
         * sent every 2 s). If anything fails, whatever was started is closed.
         *
         * @throws IllegalStateException if a server does not start or the group does not settle within 30 s
         *     (scaled)
         */
        public RedisSentinelGroup start() {
            RedisBinary chosen = binary != null ? binary : RedisBinary.resolve();
            RedisServer.Builder dataNode = this.dataNode.copy()
                    .binary(chosen)
                    .config("replica-announce-ip", RedisServer.HOST)
                    .config("repl-diskless-sync-delay", "0"); // Redis 7 waits 5 s for more replicas by default
            List<RedisServer> data = new ArrayList<>();
            List<RedisServer> watchers = new ArrayList<>();
            try {
                RedisServer master = dataNode.start();
                data.add(master);
                dataNode.config("replicaof", RedisServer.HOST + " " + master.port());
                for (int i = 0; i < replicas; i++) {
                    data.add(dataNode.start());
                }
                for (RedisServer replica : data.subList(1, data.size())) {
                    Conditions.await("replica on port " + replica.port() + " to sync with the master", SETTLE_TIMEOUT,
                            () -> replicatesFrom(replica, master));
                }
                for (int i = 0; i < SENTINELS; i++) {
                    RedisServer sentinel = RedisServer.launch(chosen, 0, null, sentinelDirectives(master.port()), true);
                    watchers.add(sentinel);
                    if (chosen.majorVersion() >= 7) {
                        sentinel.execute(FAST_SENTINEL_TIMERS);
                    }
                }
                RedisSentinelGroup group = new RedisSentinelGroup(masterName, data, watchers);
                for (RedisServer sentinel : watchers) {
                    Conditions.await("sentinel on port " + sentinel.port() + " to know the whole group",
                            SETTLE_TIMEOUT, () -> group.knowsEverything(sentinel));
                }
                return group;
            } catch (RuntimeException | Error e) {
                List<RedisServer> all = new ArrayList<>(watchers);
                all.addAll(data);
                RedisServer.closeAll(all, e);
                throw e;
            }
        }

        private Map<String, String> sentinelDirectives(int masterPort) {
            Map<String, String> directives = new LinkedHashMap<>();
            directives.put("protected-mode", "no");
            // several "sentinel" lines: the key carries the sub-directive, written verbatim as "key value"
            directives.put("sentinel monitor", masterName + " " + RedisServer.HOST + " " + masterPort + " " + QUORUM);
            directives.put("sentinel down-after-milliseconds", masterName + " " + downAfter.toMillis());
            directives.put("sentinel failover-timeout", masterName + " " + failoverTimeout.toMillis());
            directives.put("sentinel parallel-syncs", masterName + " 1");
            directives.put("sentinel announce-ip", RedisServer.HOST);
            return directives;
        }

        private static Duration positive(Duration duration, String name) {
            Objects.requireNonNull(duration, name);
            if (duration.isNegative() || duration.isZero()) {
                throw new IllegalArgumentException(name + " must be positive, was " + duration);
            }
            return duration;
        }
    }
}
