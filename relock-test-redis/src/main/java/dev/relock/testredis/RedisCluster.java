package dev.relock.testredis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Collectors;

/**
 * A Redis Cluster on loopback: masters with the 16384 slots split evenly in ranges, optionally replicas, each node a
 * {@link RedisServer} with {@code cluster-enabled yes} and its own {@code nodes.conf}. Formed with CLUSTER MEET,
 * ADDSLOTS and REPLICATE over the fixture's own connections, so no redis-cli is needed; works on Redis 6.2 and 7.
 *
 * <pre>{@code
 * try (RedisCluster cluster = RedisCluster.builder().masters(3).replicasPerMaster(1).start()) {
 *     RedisClusterClient client = RedisClusterClient.create(cluster.uris());  // or cluster.seedUri()
 *     RedisServer owner = cluster.masterFor("lock:{orders}");
 *     RedisServer promoted = cluster.failover(cluster.replicaOf(owner));     // CLUSTER FAILOVER, awaited
 *     RedisServer survivor = cluster.killMaster(promoted);                    // SIGKILL, awaits the replica
 *     cluster.migrateSlot(RedisCluster.slot("k"), someOtherMaster);           // MOVED for clients
 * }
 * }</pre>
 *
 * <p>What is true once {@link Builder#start()} returned, and after every method here that changes the topology:
 * every running, unpaused node reports {@code cluster_state:ok}, knows every node, and agrees with the others on
 * every node's role and on which master serves each slot; every replica replicates from its master with the link up. Nodes run with
 * {@code cluster-node-timeout 2000} (a master that does not answer for 2 s is failed over),
 * {@code cluster-replica-validity-factor 0} (any replica may be promoted however long its link was down) and
 * {@code repl-diskless-sync-delay 0}.
 *
 * <p>Roles move: {@link #masters()} and {@link #replicas()} read the current roles from a node's
 * {@code CLUSTER NODES}. A node keeps its port, directory and {@code nodes.conf} across restarts, so a restarted
 * node rejoins with its identity (a former master rejoins as a replica of whoever took its slots). Methods may be
 * called from any thread, but the waits assume one test drives the faults. {@link #close()} closes every node.
 */
public final class RedisCluster implements AutoCloseable {

    /** The number of hash slots of every Redis Cluster. */
    public static final int SLOTS = 16384;

    private static final Duration SETTLE_TIMEOUT = Duration.ofSeconds(30);

    private final List<RedisServer> nodes;
    private final Map<Integer, String> idsByPort;

    private RedisCluster(List<RedisServer> nodes, Map<Integer, String> idsByPort) {
        this.nodes = List.copyOf(nodes);
        this.idsByPort = Map.copyOf(idsByPort);
    }

    /** A builder; nothing runs until {@link Builder#start()}. */
    public static Builder builder() {
        return new Builder();
    }

    /** Starts three masters without replicas. */
    public static RedisCluster start() {
        return builder().start();
    }

    /**
     * The hash slot of {@code key}: CRC16 (XMODEM) of the key, or of its hash tag (the text between the first
     * {@code {} and the next {@code }}, if not empty), modulo {@value #SLOTS}; the same as {@code CLUSTER KEYSLOT}.
     */
    public static int slot(String key) {
        Objects.requireNonNull(key, "key");
        byte[] bytes = key.getBytes(StandardCharsets.UTF_8);
        int from = 0;
        int to = bytes.length;
        int open = indexOf(bytes, (byte) '{', 0);
        if (open >= 0) {
            int close = indexOf(bytes, (byte) '}', open + 1);
            if (close > open + 1) {
                from = open + 1;
                to = close;
            }
        }
        int crc = 0;
        for (int i = from; i < to; i++) {
            crc ^= (bytes[i] & 0xff) << 8;
            for (int bit = 0; bit < 8; bit++) {
                crc = (crc & 0x8000) != 0 ? (crc << 1) ^ 0x1021 : crc << 1;
            }
        }
        return (crc & 0xffff) % SLOTS;
    }

    private static int indexOf(byte[] bytes, byte wanted, int from) {
        for (int i = from; i < bytes.length; i++) {
            if (bytes[i] == wanted) {
                return i;
            }
        }
        return -1;
    }

    /** Every node in start order: first the masters as started, then their replicas. */
    public List<RedisServer> nodes() {
        return nodes;
    }

    /** {@code redis://127.0.0.1:PORT} of the first node: one seed is enough for Lettuce's cluster client. */
    public String seedUri() {
        return nodes.get(0).uri();
    }

    /** {@code redis://127.0.0.1:PORT} of every node, in start order: seeds for a cluster client. */
    public List<String> uris() {
        return nodes.stream().map(RedisServer::uri).toList();
    }

    /** The nodes that are masters with slots now, as a running node sees it, in start order. */
    public List<RedisServer> masters() {
        ClusterNodesView view = currentView();
        return nodes.stream().filter(node -> {
            ClusterNodesView.Entry entry = view.byPort(node.port());
            return entry != null && entry.isMaster() && !entry.slotRanges().isEmpty();
        }).toList();
    }

    /** The nodes that are replicas now, as a running node sees it, in start order. */
    public List<RedisServer> replicas() {
        ClusterNodesView view = currentView();
        return nodes.stream().filter(node -> {
            ClusterNodesView.Entry entry = view.byPort(node.port());
            return entry != null && !entry.isMaster();
        }).toList();
    }

    /** The master that serves {@code key}'s slot now. */
    public RedisServer masterFor(String key) {
        return masterForSlot(slot(key));
    }

    /**
     * The master that serves {@code slot} now, as a running node sees it.
     *
     * @throws IllegalArgumentException if the slot is not 0..16383
     * @throws IllegalStateException if no master serves it
     */
    public RedisServer masterForSlot(int slot) {
        checkSlot(slot);
        int port = currentView().ownerPort(slot);
        if (port < 0) {
            throw new IllegalStateException("no master of " + this + " serves slot " + slot);
        }
        return nodeOnPort(port);
    }

    /**
     * The first replica (in start order) of {@code master}, as a running node sees it now.
     *
     * @throws IllegalArgumentException if {@code master} has no replica
     */
    public RedisServer replicaOf(RedisServer master) {
        String masterId = idOf(master);
        ClusterNodesView view = currentView();
        return nodes.stream().filter(node -> {
            ClusterNodesView.Entry entry = view.byPort(node.port());
            return entry != null && masterId.equals(entry.masterId());
        }).findFirst().orElseThrow(() -> new IllegalArgumentException(master + " has no replica in " + this));
    }

    /** The cluster node id of {@code node} (what CLUSTER MYID answered at start; it survives restarts). */
    public String idOf(RedisServer node) {
        String id = idsByPort.get(requireOwn(node).port());
        return Objects.requireNonNull(id);
    }

    /**
     * Runs {@code CLUSTER FAILOVER} on {@code replica} (a coordinated failover: its master must be running) and
     * waits until it serves its former master's slots in every node's view and the former master replicates from
     * it.
     *
     * @return {@code replica}, now a master
     * @throws IllegalArgumentException if it is not a replica now
     * @throws IllegalStateException if the cluster does not settle within 30 s (scaled)
     */
    public RedisServer failover(RedisServer replica) {
        ClusterNodesView.Entry entry = currentView().byPort(requireOwn(replica).port());
        if (entry == null || entry.isMaster()) {
            throw new IllegalArgumentException(replica + " is not a replica in " + this);
        }
        replica.execute("CLUSTER", "FAILOVER");
        awaitMasterRole(replica);
        return replica;
    }

    /**
     * Kills {@code master} with SIGKILL and waits until one of its replicas serves its slots in every running
     * node's view (about {@code cluster-node-timeout} plus an election: 2 to 4 s).
     *
     * @return the promoted replica
     * @throws IllegalArgumentException if it is not a master with a replica now
     * @throws IllegalStateException if no replica takes over within 30 s (scaled)
     */
    public RedisServer killMaster(RedisServer master) {
        replicaOf(master); // fails early if none could take over
        int anySlot = currentView().byPort(master.port()).slotRanges().get(0)[0];
        master.kill();
        RedisServer[] promoted = new RedisServer[1];
        Conditions.await("a replica of port " + master.port() + " to take over its slots in " + this,
                SETTLE_TIMEOUT, () -> {
                    if (!isHealthy()) {
                        return false;
                    }
                    RedisServer owner = nodeOnPort(currentView().ownerPort(anySlot));
                    promoted[0] = owner;
                    return owner != master;
                });
        return promoted[0];
    }

    /**
     * Moves {@code slot} with its keys to {@code target}, the way redis-cli's resharding does: IMPORTING and
     * MIGRATING, MIGRATE of every key, then {@code CLUSTER SETSLOT NODE} on every master. Clients then get MOVED
     * for its keys.
     *
     * @throws IllegalArgumentException if the slot is not 0..16383, or {@code target} is not a master or already
     *     serves the slot
     */
    public void migrateSlot(int slot, RedisServer target) {
        beginSlotMigration(slot, target);
        finishSlotMigration(slot, target);
    }

    /**
     * Marks {@code slot} as migrating from its master to {@code target} (IMPORTING on the target, MIGRATING on the
     * source) and moves no key: the source still answers for the keys it has and sends ASK for any other key of
     * the slot, as in the middle of a resharding. {@link #finishSlotMigration} completes it.
     *
     * @throws IllegalArgumentException as {@link #migrateSlot}
     */
    public void beginSlotMigration(int slot, RedisServer target) {
        checkSlot(slot);
        RedisServer source = masterForSlot(slot);
        if (source == requireOwn(target)) {
            throw new IllegalArgumentException(target + " already serves slot " + slot);
        }
        if (!masters().contains(target)) {
            throw new IllegalArgumentException(target + " is not a master with slots in " + this);
        }
        target.execute("CLUSTER", "SETSLOT", String.valueOf(slot), "IMPORTING", idOf(source));
        source.execute("CLUSTER", "SETSLOT", String.valueOf(slot), "MIGRATING", idOf(target));
    }

    /**
     * Completes a migration begun with {@link #beginSlotMigration}: moves every key of the slot to {@code target}
     * with MIGRATE and assigns the slot to it on every master, then waits until all nodes agree.
     *
     * @throws IllegalStateException if the cluster does not settle within 30 s (scaled)
     */
    public void finishSlotMigration(int slot, RedisServer target) {
        checkSlot(slot);
        RedisServer source = masterForSlot(slot);
        String slotText = String.valueOf(slot);
        while (true) {
            List<?> keys = (List<?>) source.reply("CLUSTER", "GETKEYSINSLOT", slotText, "100");
            if (keys.isEmpty()) {
                break;
            }
            List<String> migrate = new ArrayList<>(List.of("MIGRATE", RedisServer.HOST, String.valueOf(target.port()),
                    "", "0", String.valueOf(TestTimeouts.scaled(Duration.ofSeconds(5)).toMillis()), "KEYS"));
            keys.forEach(key -> migrate.add((String) key));
            source.execute(migrate.toArray(String[]::new));
        }
        String targetId = idOf(target);
        target.execute("CLUSTER", "SETSLOT", slotText, "NODE", targetId);
        source.execute("CLUSTER", "SETSLOT", slotText, "NODE", targetId);
        for (RedisServer master : masters()) {
            if (master != target && master != source && master.isRunning() && !master.isPaused()) {
                master.execute("CLUSTER", "SETSLOT", slotText, "NODE", targetId);
            }
        }
        Conditions.await("slot " + slot + " to move to port " + target.port() + " in " + this, SETTLE_TIMEOUT,
                () -> isHealthy() && currentView().ownerPort(slot) == target.port());
    }

    /**
     * Waits until the cluster is healthy again (see the class comment), e.g. after a node was restarted.
     *
     * @throws IllegalStateException if it is not within 30 s (scaled)
     */
    public void awaitHealthy() {
        Conditions.await("the nodes of " + this + " to agree and report cluster_state:ok", SETTLE_TIMEOUT,
                this::isHealthy);
    }

    /** Closes every node. Idempotent. */
    @Override
    public void close() {
        RedisServer.closeAll(nodes);
    }

    @Override
    public String toString() {
        return "RedisCluster" + nodes.stream().map(n -> String.valueOf(n.port()))
                .collect(Collectors.joining(",", "[", "]"));
    }

    // ---- state ----

    private void awaitMasterRole(RedisServer promoted) {
        Conditions.await("port " + promoted.port() + " to become a master in every view of " + this, SETTLE_TIMEOUT,
                () -> {
                    if (!isHealthy()) {
                        return false;
                    }
                    ClusterNodesView.Entry entry = currentView().byPort(promoted.port());
                    return entry.isMaster() && !entry.slotRanges().isEmpty();
                });
    }

    /**
     * True if every running, unpaused node reports cluster_state:ok, knows every node past the handshake, agrees
     * with the others on every node's role and slots, and every running replica's link to its master is up.
     */
    private boolean isHealthy() {
        Map<Integer, String> agreed = null;
        for (RedisServer node : nodes) {
            if (!node.isRunning() || node.isPaused()) {
                continue;
            }
            if (!"ok".equals(Conditions.infoField(node.execute("CLUSTER", "INFO"), "cluster_state"))) {
                return false;
            }
            ClusterNodesView view = ClusterNodesView.parse(node.execute("CLUSTER", "NODES"));
            if (view.entries().size() != nodes.size()
                    || !view.entries().stream().allMatch(ClusterNodesView.Entry::isSettled)) {
                return false;
            }
            for (ClusterNodesView.Entry entry : view.entries()) {
                boolean running = nodeOnPort(entry.port()).isRunning();
                if (running && entry.isFailed()) {
                    return false; // a restarted node that the others still consider failed
                }
            }
            Map<Integer, String> roles = view.roles();
            if (agreed != null && !agreed.equals(roles)) {
                return false;
            }
            agreed = roles;
            ClusterNodesView.Entry self = view.byPort(node.port());
            if (!self.isMaster()) {
                String info = node.execute("INFO", "replication");
                if (!"up".equals(Conditions.infoField(info, "master_link_status"))) {
                    return false;
                }
            }
        }
        return agreed != null;
    }

    /** The CLUSTER NODES view of the first running, unpaused node. */
    private ClusterNodesView currentView() {
        for (RedisServer node : nodes) {
            if (node.isRunning() && !node.isPaused()) {
                return ClusterNodesView.parse(node.execute("CLUSTER", "NODES"));
            }
        }
        throw new IllegalStateException("no node of " + this + " is running");
    }

    private RedisServer nodeOnPort(int port) {
        return nodes.stream().filter(node -> node.port() == port).findFirst()
                .orElseThrow(() -> new IllegalStateException("port " + port + " is not a node of " + this));
    }

    private RedisServer requireOwn(RedisServer node) {
        Objects.requireNonNull(node, "node");
        if (!nodes.contains(node)) {
            throw new IllegalArgumentException(node + " is not a node of " + this);
        }
        return node;
    }

    private static void checkSlot(int slot) {
        if (slot < 0 || slot >= SLOTS) {
            throw new IllegalArgumentException("slot must be 0.." + (SLOTS - 1) + ", was " + slot);
        }
    }

    /** Options for a cluster. Not thread-safe; each {@link #start()} starts a new, independent cluster. */
    public static final class Builder {

        private final RedisServer.Builder node = RedisServer.builder();
        private int masters = 3;
        private int replicasPerMaster;

        private Builder() {
        }

        /** The executable of every node; default {@link RedisBinary#resolve()}. */
        public Builder binary(RedisBinary binary) {
            node.binary(binary);
            return this;
        }

        /**
         * How many masters share the slots; default 3.
         *
         * @throws IllegalArgumentException if not 1..16
         */
        public Builder masters(int masters) {
            if (masters < 1 || masters > 16) {
                throw new IllegalArgumentException("masters must be 1..16, was " + masters);
            }
            this.masters = masters;
            return this;
        }

        /**
         * How many replicas each master has; default 0.
         *
         * @throws IllegalArgumentException if not 0..3
         */
        public Builder replicasPerMaster(int replicas) {
            if (replicas < 0 || replicas > 3) {
                throw new IllegalArgumentException("replicasPerMaster must be 0..3, was " + replicas);
            }
            this.replicasPerMaster = replicas;
            return this;
        }

        /** Append-only file with {@code appendfsync always} on every node; see {@link RedisServer.Builder#appendOnly}. */
        public Builder appendOnly(boolean appendOnly) {
            node.appendOnly(appendOnly);
            return this;
        }

        /**
         * A redis.conf directive for every node; see {@link RedisServer.Builder#config}. May override the cluster
         * defaults (e.g. {@code cluster-node-timeout}), not {@code cluster-enabled} or {@code cluster-config-file}.
         */
        public Builder config(String key, String value) {
            String directive = Objects.requireNonNull(key, "key").trim();
            if (directive.equalsIgnoreCase("cluster-enabled") || directive.equalsIgnoreCase("cluster-config-file")) {
                throw new IllegalArgumentException("'" + directive + "' is set by the cluster");
            }
            node.config(key, value);
            return this;
        }

        /**
         * Starts the nodes, forms the cluster, and returns once it is healthy (see the class comment). If anything
         * fails, whatever was started is closed.
         *
         * @throws IllegalStateException if a node does not start or the cluster does not settle within 30 s
         *     (scaled)
         */
        public RedisCluster start() {
            RedisServer.Builder configured = node.copy()
                    .config("cluster-enabled", "yes")
                    .config("cluster-config-file", "nodes.conf")
                    .configIfAbsent("cluster-node-timeout", "2000")
                    .configIfAbsent("cluster-replica-validity-factor", "0")
                    .configIfAbsent("cluster-announce-ip", RedisServer.HOST)
                    .configIfAbsent("repl-diskless-sync-delay", "0");
            List<RedisServer> started = new ArrayList<>();
            try {
                int total = masters * (1 + replicasPerMaster);
                for (int i = 0; i < total; i++) {
                    started.add(configured.start());
                }
                Map<Integer, String> ids = new HashMap<>();
                for (RedisServer server : started) {
                    ids.put(server.port(), server.execute("CLUSTER", "MYID"));
                }
                for (int i = 0; i < masters; i++) {
                    RedisServer master = started.get(i);
                    // distinct epochs up front spare the nodes resolving a collision among themselves
                    master.execute("CLUSTER", "SET-CONFIG-EPOCH", String.valueOf(i + 1));
                    master.execute(addSlots(i * SLOTS / masters, (i + 1) * SLOTS / masters - 1));
                }
                RedisServer first = started.get(0);
                for (RedisServer other : started.subList(1, started.size())) {
                    first.execute("CLUSTER", "MEET", RedisServer.HOST, String.valueOf(other.port()));
                }
                RedisCluster cluster = new RedisCluster(started, ids);
                Conditions.await("every node of " + cluster + " to know every other", SETTLE_TIMEOUT,
                        () -> started.stream().allMatch(server -> {
                            ClusterNodesView view = ClusterNodesView.parse(server.execute("CLUSTER", "NODES"));
                            return view.entries().size() == total
                                    && view.entries().stream().allMatch(ClusterNodesView.Entry::isSettled);
                        }));
                for (int i = masters; i < total; i++) {
                    String masterId = ids.get(started.get((i - masters) % masters).port());
                    started.get(i).execute("CLUSTER", "REPLICATE", masterId);
                }
                cluster.awaitHealthy();
                return cluster;
            } catch (RuntimeException | Error e) {
                RedisServer.closeAll(started, e);
                throw e;
            }
        }

        private static String[] addSlots(int from, int to) {
            String[] command = new String[2 + to - from + 1];
            command[0] = "CLUSTER";
            command[1] = "ADDSLOTS"; // not ADDSLOTSRANGE: that needs Redis 7
            for (int slot = from; slot <= to; slot++) {
                command[2 + slot - from] = String.valueOf(slot);
            }
            return command;
        }
    }
}
