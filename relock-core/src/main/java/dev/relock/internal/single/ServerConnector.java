package dev.relock.internal.single;

import dev.relock.ClientIdentity;
import dev.relock.LeaseLostListener;
import dev.relock.RelockClient;
import dev.relock.RelockException;
import dev.relock.RelockSettings;
import dev.relock.ReplicationGuard;
import dev.relock.internal.engine.EngineClient;
import dev.relock.internal.engine.RedisConnections;
import dev.relock.internal.metrics.Instrumentation;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Builds a client on one Redis (standalone, Sentinel or Cluster): from URIs, with a Lettuce client relock creates,
 * configures and shuts down at close, or on the caller's Lettuce client, whose options it checks and leaves alone.
 * Refuses, before anything connects, what the replication guard cannot work with, and after connecting, a server
 * that lacks what the guard needs.
 *
 * <p>Stateless.
 */
final class ServerConnector {

    private ServerConnector() {
    }

    /** With exactly one of redisUri and redisClient: a standalone or Sentinel Redis. */
    static RelockClient connect(String redisUri, RedisClient redisClient, RelockSettings settings,
            ClientIdentity identity, List<LeaseLostListener> listeners, Instrumentation instrumentation) {
        refuseTheGuardOnALettuceThatSendsInFlightCommandsAgain(settings);
        if (redisClient != null) {
            if (settings.replicationGuard() != null && ResentCommandsNotice.sendsCommandsAgain(redisClient.getOptions())) {
                // the guard's connection is the caller's client's too; ClusterGuardLinks make their own
                throw new IllegalArgumentException("replicationGuard(...) needs a Lettuce client that does not send"
                        + " commands again after a reconnect, but the given one has autoReconnect with"
                        + " disconnectedBehavior " + redisClient.getOptions().getDisconnectedBehavior() + ": a WAIT"
                        + " sent again on a new connection counts none of the acquisition's writes and would pass it"
                        + " unreplicated. Set ClientOptions.disconnectedBehavior(REJECT_COMMANDS) (or"
                        + " autoReconnect(false)) on the RedisClient, or give relock a URI");
            }
            ResentCommandsNotice.tellIfCommandsAreSentAgain(redisClient, true);
            return build(settings, identity, listeners, instrumentation, redisClient, false,
                    "(caller's Lettuce client)");
        }
        RedisURI uri = parse(redisUri, "redisUri");
        uri.setTimeout(settings.commandTimeout());
        RedisConnections.nameConnections(uri, identity);
        String address = uri.getSentinels().isEmpty()
                ? uri.getHost() + ":" + uri.getPort()
                : "sentinel master " + uri.getSentinelMasterId();
        RedisClient created;
        try {
            created = LazySyncRedisClient.withLazySync(uri);
        } catch (LinkageError e) {
            // a Lettuce without the protected API LazySyncRedisClient builds on
            created = RedisClient.create(uri);
        }
        created.setOptions(RedisConnections.clientOptions(settings.commandTimeout()));
        ResentCommandsNotice.tellIfCommandsAreSentAgain(created, false);
        return build(settings, identity, listeners, instrumentation, created, true, address);
    }

    /** With exactly one of seed URIs and a Lettuce cluster client: a Redis Cluster. */
    static RelockClient connectCluster(List<String> seedUris, RedisClusterClient clusterClient,
            RelockSettings settings, ClientIdentity identity, List<LeaseLostListener> listeners,
            Instrumentation instrumentation) {
        refuseTheGuardOnALettuceThatSendsInFlightCommandsAgain(settings);
        if (clusterClient != null) {
            ResentCommandsNotice.tellIfCommandsAreSentAgain(clusterClient, true);
            return build(settings, identity, listeners, instrumentation, clusterClient, false,
                    "(caller's Lettuce cluster client)");
        }
        List<RedisURI> seeds = new ArrayList<>();
        for (String seedUri : seedUris) {
            RedisURI seed = parse(seedUri, "redisClusterUris");
            if (!seed.getSentinels().isEmpty()) {
                throw new IllegalArgumentException("redisClusterUris takes the URIs of cluster nodes, not of Sentinels: "
                        + RedisConnections.withoutCredentials(seedUri));
            }
            seed.setTimeout(settings.commandTimeout());
            RedisConnections.nameConnections(seed, identity);
            seeds.add(seed);
        }
        String address = "cluster " + seeds.stream().map(seed -> seed.getHost() + ":" + seed.getPort()).toList();
        RedisClusterClient created = RedisClusterClient.create(seeds);
        created.setOptions(clusterOptions(settings.commandTimeout()));
        ResentCommandsNotice.tellIfCommandsAreSentAgain(created, false);
        return build(settings, identity, listeners, instrumentation, created, true, address);
    }

    /** The options of a Lettuce cluster client relock creates. */
    private static ClusterClientOptions clusterOptions(Duration commandTimeout) {
        return ClusterClientOptions.builder()
                .autoReconnect(true)
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .timeoutOptions(TimeoutOptions.enabled(commandTimeout))
                .socketOptions(SocketOptions.builder().connectTimeout(commandTimeout).build())
                // learn a failover or a resharding from MOVED, ASK and failing reconnects at once,
                // and anything else within half a minute
                .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
                        .enableAllAdaptiveRefreshTriggers()
                        .adaptiveRefreshTriggersTimeout(Duration.ofSeconds(1))
                        .refreshTriggersReconnectAttempts(2)
                        .enablePeriodicRefresh(Duration.ofSeconds(30))
                        .build())
                .build();
    }

    /**
     * The replication guard's WAIT must never be sent again on a new connection, where it would count none of the
     * acquisition's writes and pass it unreplicated; a Lettuce older than 6.7 sends a command in flight at a dropped
     * connection again after the reconnect even under {@code REJECT_COMMANDS} (what Spring Boot 3.5 manages, 6.6.0,
     * does). Refused before anything connects.
     */
    private static void refuseTheGuardOnALettuceThatSendsInFlightCommandsAgain(RelockSettings settings) {
        if (settings.replicationGuard() != null && RedisConnections.lettuceSendsInFlightCommandsAgain()) {
            throw new IllegalStateException("replicationGuard(...) needs Lettuce 6.7 or newer, but "
                    + RedisConnections.lettuceVersion() + " is on the class path: it sends a command that was in"
                    + " flight when its connection dropped again after the reconnect, even with REJECT_COMMANDS, and"
                    + " a WAIT sent again on a new connection counts none of the acquisition's writes and would pass"
                    + " it unreplicated. Manage io.lettuce:lettuce-core at 6.7 or newer (relock is built with 6.8)");
        }
    }

    /** A connected client over {@code redisClient}, if its server offers what its replication guard needs. */
    private static RelockClient build(RelockSettings settings, ClientIdentity identity,
            List<LeaseLostListener> listeners, Instrumentation instrumentation, AbstractRedisClient redisClient,
            boolean ownsRedisClient, String address) {
        return offeringWhatTheGuardNeeds(new EngineClient(settings, identity, listeners,
                core -> new SingleServerEngine(core, instrumentation, redisClient, ownsRedisClient, address)));
    }

    /**
     * The client, if its server offers what its replication guard needs ({@code WAITAOF} for an
     * fsynced guard); otherwise closes it and says what is missing.
     */
    private static EngineClient offeringWhatTheGuardNeeds(EngineClient client) {
        SingleServerEngine engine = (SingleServerEngine) client.engine();
        ReplicationGuard guard = client.settings().replicationGuard();
        if (guard != null && guard.fsynced() && !engine.serverFeatures().waitAof()) {
            client.close();
            throw new RelockException("replicationGuard(...) is fsynced, which needs WAITAOF (Redis 7.2 or later),"
                    + " but Redis at " + engine.address() + " does not offer it (COMMAND INFO WAITAOF: unknown)");
        }
        return client;
    }

    private static RedisURI parse(String uri, String setting) {
        try {
            return RedisURI.create(uri);
        } catch (RuntimeException e) {
            // Lettuce's message may repeat the URI, password included
            throw new IllegalArgumentException(setting + " is not a valid Redis URI: "
                    + RedisConnections.withoutCredentials(uri));
        }
    }
}
