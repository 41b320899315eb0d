package dev.relock.internal.single;

import dev.relock.RedisUnavailableException;
import dev.relock.RelockSettings;
import dev.relock.internal.engine.RedisConnections;
import dev.relock.internal.engine.Ticker;
import dev.relock.internal.redis.RedisCalls;
import dev.relock.internal.redis.Utf8Codec;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The replication guard's connections on Redis Cluster: one plain connection per master, opened the
 * first time an acquisition needs that master, closed with the client.
 *
 * <p>Design notes. {@code WAIT} counts the writes of its own connection, so a guarded acquisition and
 * its {@code WAIT} must reach the master of the lock's slot over one connection; Lettuce's routed
 * cluster connection cannot promise that (a keyless {@code WAIT} goes to a node of its choosing), and
 * a {@code WAIT} on it would stall the renewals it carries. These connections carry only guarded
 * acquisitions, their {@code WAIT}s and the withdrawals that undo them.
 * <ul>
 *   <li>They do not follow redirections: a script answered {@code MOVED} was not run, and the caller
 *       asks for a {@link #refreshTopology() fresh topology} and tries again on the new master.
 *       {@code ASK} (a slot in migration) is retried on the same node, as {@code TRYAGAIN} is, until
 *       the migration ends in a {@code MOVED}.
 *   <li>They do not reconnect by themselves: a command re-sent on a new socket would make a later
 *       {@code WAIT} count nothing (a fresh connection has written nothing) and acknowledge a hold the
 *       replicas may not have. A connection found closed is opened again for the next acquisition.
 *   <li>Which master serves a slot comes from the cluster client's partitions, the view Lettuce keeps
 *       for the routed connection; node URIs there carry the seed URIs' credentials and TLS settings.
 * </ul>
 * Thread-safe: the map is concurrent, and opening never blocks the calling thread (acquisitions run
 * on Lettuce's I/O and timer threads too).
 */
final class ClusterGuardLinks {

    private static final Logger log = LoggerFactory.getLogger(ClusterGuardLinks.class);

    private final RedisClusterClient cluster;
    // opens the node connections on the cluster client's threads and event loops
    private final RedisClient nodes;
    private final RelockSettings settings;
    // the CLIENT SETNAME of every link (the client's ClientIdentity#connectionName)
    private final String connectionName;
    // the client's ticker, which each link's calls read their waits on
    private final Ticker ticker;
    // "host:port" of a master -> its connection, open or opening; a failed or closed one is replaced
    private final Map<String, CompletableFuture<Link>> links = new ConcurrentHashMap<>();
    private final AtomicBoolean closed = new AtomicBoolean();

    private record Link(StatefulRedisConnection<String, String> connection, RedisCalls calls) {}

    ClusterGuardLinks(RedisClusterClient cluster, RelockSettings settings, String connectionName,
            Ticker ticker) {
        this.cluster = cluster;
        this.settings = settings;
        this.connectionName = connectionName;
        this.ticker = ticker;
        this.nodes = RedisClient.create(cluster.getResources());
        nodes.setOptions(ClientOptions.copyOf(cluster.getOptions()).mutate()
                .autoReconnect(false)
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .build());
    }

    /**
     * The guard's connection to the master that serves {@code slot} now, as the cluster client's
     * partitions say; completed at once when it is open already. Fails with
     * {@link RedisUnavailableException} when no master is known for the slot or it cannot be
     * reached; a fresh topology is asked for then, for the next attempt.
     */
    CompletableFuture<RedisCalls> toMasterOf(int slot) {
        if (closed.get()) {
            return CompletableFuture.failedFuture(new IllegalStateException("the replication guard's connections are closed"));
        }
        RedisClusterNode master = cluster.getPartitions().getMasterBySlot(slot);
        if (master == null || master.getUri() == null) {
            refreshTopology();
            return CompletableFuture.failedFuture(new RedisUnavailableException(
                    "no master of Redis Cluster slot " + slot + " is known; asked the cluster for its topology again", null));
        }
        RedisURI uri = master.getUri();
        String address = uri.getHost() + ":" + uri.getPort();
        return links.compute(address, (key, link) -> link == null || isDead(link) ? open(uri, address) : link)
                .thenApply(Link::calls);
    }

    private static boolean isDead(CompletableFuture<Link> link) {
        return link.isCompletedExceptionally() || (link.isDone() && !link.join().connection().isOpen());
    }

    private CompletableFuture<Link> open(RedisURI uri, String address) {
        log.debug("replication guard: connecting to Redis Cluster master {}", address);
        // the topology's URI carries the seed's credentials but not its client name
        RedisURI named = RedisURI.builder(uri).withClientName(connectionName).build();
        CompletableFuture<Link> opened = nodes.connectAsync(Utf8Codec.INSTANCE, named).toCompletableFuture()
                .thenApply(connection -> {
                    connection.setTimeout(settings.commandTimeout());
                    if (closed.get()) {
                        // closed while connecting: close() may have missed this one
                        connection.closeAsync();
                        throw new IllegalStateException("the replication guard's connections are closed");
                    }
                    return new Link(connection, new RedisCalls(connection, connection.async(),
                            settings.commandTimeout(), address + " (Redis Cluster master)",
                            cluster.getResources().eventExecutorGroup(),
                            nodes.getOptions().getTimeoutOptions().isTimeoutCommands(), ticker::nanoTime));
                });
        opened.whenComplete((link, error) -> {
            if (error != null) {
                log.debug("replication guard: cannot connect to {}: {}", address, error.toString());
                refreshTopology();
            }
        });
        return opened;
    }

    /** Asks the cluster for its topology again, for the guard's next look-up; completes when done. */
    CompletableFuture<Void> refreshTopology() {
        return cluster.refreshPartitionsAsync().toCompletableFuture().handle((done, error) -> {
            if (error != null) {
                log.debug("replication guard: refreshing the cluster topology failed: {}", error.toString());
            }
            return null;
        });
    }

    /** Closes every connection; later look-ups fail. */
    void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        for (CompletableFuture<Link> link : links.values()) {
            link.thenAccept(open -> open.connection().close());
        }
        links.clear();
        RedisConnections.shutdown(nodes, Duration.ofSeconds(2));
    }
}
