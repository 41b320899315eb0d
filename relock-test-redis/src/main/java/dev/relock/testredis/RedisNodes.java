package dev.relock.testredis;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Several independent redis-server masters, as Redlock wants them: no replication between them, each on its own
 * loopback port and in its own directory.
 *
 * <pre>{@code
 * try (RedisNodes nodes = RedisNodes.builder(5).appendOnly(true).start()) {
 *     List<String> uris = nodes.uris();    // redis://127.0.0.1:p1, ... in node order
 *     nodes.node(0).kill();                // faults go through each node's RedisServer
 *     nodes.node(1).pause();
 *     nodes.node(2).restartWithoutData();  // comes back empty, as after a lost disk
 * }
 * }</pre>
 *
 * <p>The set of nodes is fixed at start; a node keeps its index and port for the life of the set, across
 * restarts. All nodes run the same binary with the same configuration. Methods may be called from any thread.
 * {@link #close()} closes every node, even if closing one of them fails.
 */
public final class RedisNodes implements AutoCloseable {

    private final List<RedisServer> nodes;

    private RedisNodes(List<RedisServer> nodes) {
        this.nodes = List.copyOf(nodes);
    }

    /**
     * A builder for {@code count} masters.
     *
     * @throws IllegalArgumentException if {@code count} is less than 1
     */
    public static Builder builder(int count) {
        if (count < 1) {
            throw new IllegalArgumentException("count must be at least 1, was " + count);
        }
        return new Builder(count);
    }

    /** Starts {@code count} masters with the defaults of {@link RedisServer#start()}. */
    public static RedisNodes start(int count) {
        return builder(count).start();
    }

    /** How many nodes there are. */
    public int size() {
        return nodes.size();
    }

    /**
     * The node at {@code index}, counted from 0 in start order.
     *
     * @throws IndexOutOfBoundsException if there is no such node
     */
    public RedisServer node(int index) {
        Objects.checkIndex(index, nodes.size());
        return nodes.get(index);
    }

    /** Every node, in index order; the list is unmodifiable. */
    public List<RedisServer> nodes() {
        return nodes;
    }

    /** {@link RedisServer#uriWithPassword()} of every node, in index order. */
    public List<String> uris() {
        return nodes.stream().map(RedisServer::uriWithPassword).toList();
    }

    /** Runs {@code FLUSHALL} on every running, unpaused node. */
    public void flushAll() {
        for (RedisServer node : nodes) {
            if (node.isRunning() && !node.isPaused()) {
                node.flushAll();
            }
        }
    }

    /** Closes every node (stops it, deletes its directory). Idempotent. */
    @Override
    public void close() {
        RedisServer.closeAll(nodes);
    }

    @Override
    public String toString() {
        return "RedisNodes" + nodes;
    }

    /** Options shared by every node. Not thread-safe. */
    public static final class Builder {

        private final int count;
        private final RedisServer.Builder server = RedisServer.builder();

        private Builder(int count) {
            this.count = count;
        }

        /** The executable every node runs; default {@link RedisBinary#resolve()}. */
        public Builder binary(RedisBinary binary) {
            server.binary(binary);
            return this;
        }

        /** Sets the same {@code requirepass} on every node; see {@link RedisServer.Builder#password(String)}. */
        public Builder password(String password) {
            server.password(password);
            return this;
        }

        /**
         * Append-only file with {@code appendfsync always} on every node, so acknowledged writes survive
         * {@link RedisServer#kill()} + {@link RedisServer#restart()}; see {@link RedisServer.Builder#appendOnly}.
         */
        public Builder appendOnly(boolean appendOnly) {
            server.appendOnly(appendOnly);
            return this;
        }

        /**
         * A redis.conf directive for every node, e.g. {@code config("maxmemory", "2mb")} and
         * {@code config("maxmemory-policy", "allkeys-lru")}; see {@link RedisServer.Builder#config}.
         */
        public Builder config(String key, String value) {
            server.config(key, value);
            return this;
        }

        /**
         * Starts every node and returns once all answer; if one fails to start, those already started are closed.
         *
         * @throws IllegalStateException if a node does not come up
         */
        public RedisNodes start() {
            List<RedisServer> started = new ArrayList<>(count);
            try {
                for (int i = 0; i < count; i++) {
                    started.add(server.start());
                }
            } catch (RuntimeException | Error e) {
                RedisServer.closeAll(started, e);
                throw e;
            }
            return new RedisNodes(started);
        }
    }
}
