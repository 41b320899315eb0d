package dev.relock.internal.single;

import dev.relock.RedisUnavailableException;
import dev.relock.RelockException;
import dev.relock.RelockSettings;
import dev.relock.internal.engine.RedisConnections;
import dev.relock.internal.engine.Ticker;
import dev.relock.internal.redis.RedisCalls;
import dev.relock.internal.redis.Utf8Codec;
import dev.relock.internal.engine.LockEvents;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.pubsub.StatefulRedisClusterPubSubConnection;
import io.lettuce.core.pubsub.RedisPubSubListener;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * The connections of one engine to its Redis, opened together at connect and closed in order at close: one
 * multiplexed command connection (on Cluster Lettuce's routed one, one socket per node behind it), one pub/sub
 * connection for wake-ups, and with a replication guard the acquisitions' own connection (one Redis or Sentinel) or
 * one per master ({@link ClusterGuardLinks}). How wake-ups travel is decided here once: sharded pub/sub on a Cluster
 * whose servers have it ({@link ShardWakeChannels}), else a subscription to the client's own channel.
 *
 * <p>Every field is set by the constructor and never changes; {@link #close} runs once, from the engine's close.
 */
final class ServerConnections {

    private final AbstractRedisClient redisClient;
    // the Lettuce client is relock's own (built from URIs), shut down at close; else the caller's
    private final boolean ownsRedisClient;
    private final StatefulConnection<String, String> connection;
    private final StatefulRedisPubSubConnection<String, String> pubSub;
    private final RedisCalls calls;
    // the newer commands the server offers, asked once at connect
    private final ServerFeatures features;
    // on a Cluster with sharded pub/sub: the lock channels waiters listen to; otherwise null, and
    // wake-ups come on the client's own channel
    private final ShardWakeChannels shardChannels;
    // with a replication guard on a single Redis or Sentinel: a connection of its own for
    // acquisitions and their WAITs, which block it; otherwise null, and acquisitions use the shared one
    private final StatefulRedisConnection<String, String> guarded;
    private final CompletableFuture<RedisCalls> guardedCalls;
    // with a replication guard on Cluster: one such connection per master, else null
    private final ClusterGuardLinks guardLinks;

    /**
     * Connects, or closes what it opened (and an owned Lettuce client), tells {@code events} and throws.
     *
     * @param wakeChannel the client's own wake-up channel, subscribed to unless wake-ups are sharded
     * @param wakeUps told of every message on the pub/sub connection
     * @param ticker the client's clock: the calls' waits and the shard channels' confirmations are timed by it
     * @throws RedisUnavailableException if Redis cannot be reached
     */
    ServerConnections(AbstractRedisClient redisClient, boolean ownsRedisClient, String address,
            RelockSettings settings, String connectionName, String wakeChannel, RedisPubSubListener<String, String> wakeUps,
            LockEvents events, Ticker ticker) {
        this.redisClient = redisClient;
        this.ownsRedisClient = ownsRedisClient;
        boolean cluster = redisClient instanceof RedisClusterClient;
        StatefulConnection<String, String> commands = null;
        StatefulRedisPubSubConnection<String, String> subscriber = null;
        StatefulRedisConnection<String, String> forGuard = null;
        ShardWakeChannels sharded = null;
        try {
            RedisClusterAsyncCommands<String, String> async;
            if (redisClient instanceof RedisClusterClient clusterClient) {
                StatefulRedisClusterConnection<String, String> routed = clusterClient.connect(Utf8Codec.INSTANCE);
                commands = routed;
                async = routed.async();
                subscriber = clusterClient.connectPubSub(Utf8Codec.INSTANCE);
            } else {
                RedisClient plain = (RedisClient) redisClient;
                StatefulRedisConnection<String, String> single = plain.connect(Utf8Codec.INSTANCE);
                commands = single;
                async = single.async();
                subscriber = plain.connectPubSub(Utf8Codec.INSTANCE);
            }
            commands.setTimeout(settings.commandTimeout());
            subscriber.setTimeout(settings.commandTimeout());
            subscriber.addListener(wakeUps);
            this.calls = callsOn(commands, async, redisClient, settings, address, ticker);
            // ---- how wake-ups travel, decided once: sharded pub/sub on a Cluster that has it, so no
            // wake-up is broadcast to every node; otherwise plain pub/sub on this client's own channel
            // (one node: nothing to gain; on Cluster every node forwards PUBLISH to every other)
            this.features = ServerFeatures.probe(calls, address);
            sharded = shardedOrSubscribed(subscriber, features, wakeChannel, ticker);
            this.shardChannels = sharded;
            // ----
            if (settings.replicationGuard() != null && !cluster) {
                forGuard = ((RedisClient) redisClient).connect(Utf8Codec.INSTANCE);
                forGuard.setTimeout(settings.commandTimeout());
                this.guardedCalls = CompletableFuture.completedFuture(
                        callsOn(forGuard, forGuard.async(), redisClient, settings, address, ticker));
            } else {
                this.guardedCalls = CompletableFuture.completedFuture(calls);
            }
            // on Cluster the guard connects to a master when an acquisition first needs it
            this.guardLinks = settings.replicationGuard() != null && cluster
                    ? new ClusterGuardLinks((RedisClusterClient) redisClient, settings, connectionName, ticker)
                    : null;
        } catch (RuntimeException e) {
            events.connectFailed();
            closeInOrder(sharded, subscriber, forGuard, null, commands, ownsRedisClient ? redisClient : null);
            if (e instanceof RelockException) {
                throw e;
            }
            throw new RedisUnavailableException("cannot connect to Redis at " + address + ": " + causes(e), e);
        }
        this.connection = commands;
        this.pubSub = subscriber;
        this.guarded = forGuard;
    }

    /**
     * The lock channels waiters will listen to, on a Cluster whose servers have sharded pub/sub; otherwise null,
     * once {@code subscriber} is subscribed to the client's own {@code wakeChannel}.
     */
    private ShardWakeChannels shardedOrSubscribed(StatefulRedisPubSubConnection<String, String> subscriber,
            ServerFeatures features, String wakeChannel, Ticker ticker) {
        if (subscriber instanceof StatefulRedisClusterPubSubConnection<String, String> clusterPubSub
                && features.shardedPubSub()) {
            return new ShardWakeChannels(clusterPubSub, redisClient.getResources().eventBus(),
                    redisClient.getResources().eventExecutorGroup(),
                    ((RedisClusterClient) redisClient)::refreshPartitionsAsync, ticker);
        }
        calls.await(subscriber.async().subscribe(wakeChannel), "subscribe", null);
        return null;
    }

    private static RedisCalls callsOn(StatefulConnection<String, String> connection,
            RedisClusterAsyncCommands<String, String> commands, AbstractRedisClient redisClient, RelockSettings settings,
            String address, Ticker ticker) {
        // with timeout options (set on the clients relock creates) Lettuce fails every command
        // after the connection's timeout, set to the command timeout
        return new RedisCalls(connection, commands, settings.commandTimeout(), address,
                redisClient.getResources().eventExecutorGroup(),
                redisClient.getOptions().getTimeoutOptions().isTimeoutCommands(), ticker::nanoTime);
    }

    /**
     * The messages of {@code e} and its causes, each once: Lettuce's "Unable to connect" says what failed, its cause
     * why (a refused connection, WRONGPASS, a TLS error).
     */
    private static String causes(Throwable e) {
        StringBuilder text = new StringBuilder();
        for (Throwable cause = e; cause != null && cause.getCause() != cause; cause = cause.getCause()) {
            String message = cause.getMessage();
            if (message != null && text.indexOf(message) < 0) {
                text.append(text.length() == 0 ? "" : ": ").append(message);
            }
        }
        return text.toString();
    }

    AbstractRedisClient redisClient() {
        return redisClient;
    }

    /** The command connection (on Cluster Lettuce's routed one). */
    StatefulConnection<String, String> connection() {
        return connection;
    }

    /** The calls over the command connection, which every command takes unless {@link Routes} says otherwise. */
    RedisCalls calls() {
        return calls;
    }

    ServerFeatures features() {
        return features;
    }

    /** On a Cluster with sharded pub/sub, the lock channels waiters listen to; otherwise null. */
    ShardWakeChannels shardChannels() {
        return shardChannels;
    }

    /** The calls fresh acquisitions take on a single Redis or Sentinel: the guard's connection, or the shared one. */
    CompletableFuture<RedisCalls> guardedCalls() {
        return guardedCalls;
    }

    /** With a replication guard on Cluster, the connections to the masters; otherwise null. */
    ClusterGuardLinks guardLinks() {
        return guardLinks;
    }

    /** Closes every connection, the command connection last, and an owned Lettuce client after them. */
    void close() {
        closeInOrder(shardChannels, pubSub, guarded, guardLinks, connection, ownsRedisClient ? redisClient : null);
    }

    private static void closeInOrder(ShardWakeChannels sharded, StatefulConnection<?, ?> pubSub,
            StatefulConnection<?, ?> guarded, ClusterGuardLinks guardLinks, StatefulConnection<?, ?> commands,
            AbstractRedisClient owned) {
        if (sharded != null) {
            sharded.close();
        }
        RedisConnections.closeQuietly(pubSub);
        RedisConnections.closeQuietly(guarded);
        if (guardLinks != null) {
            guardLinks.close();
        }
        RedisConnections.closeQuietly(commands);
        if (owned != null) {
            RedisConnections.shutdown(owned, Duration.ofSeconds(2));
        }
    }
}
