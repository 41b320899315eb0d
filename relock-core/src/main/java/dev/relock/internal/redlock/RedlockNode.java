package dev.relock.internal.redlock;

import dev.relock.RedisUnavailableException;
import dev.relock.RelockException;
import dev.relock.internal.redis.Utf8Codec;
import dev.relock.internal.engine.LockEvents;
import dev.relock.internal.engine.Ticker;
import dev.relock.internal.script.LuaScript;
import dev.relock.internal.redis.RedisCalls;
import dev.relock.internal.redis.RedisFailures;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.pubsub.RedisPubSubListener;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One of the independent Redis masters of a Redlock client: a command connection (async API,
 * through {@link RedisCalls}) and a pub/sub connection subscribed to the release channel.
 *
 * <p>A node that could not be reached when the client was built (or later) is connected again
 * in the background: a command for a node without connections fails at once, and starts a new
 * connection attempt if none ran in the last {@link #RECONNECT_PAUSE_NANOS}. Once connected,
 * Lettuce reconnects by itself after a connection loss. Thread-safe: the connection fields are
 * written once, under this object's monitor, and read through volatile fields.
 */
final class RedlockNode implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(RedlockNode.class);
    // what RedisCalls.failure names in its messages; cut off again in describe()
    private static final String OPERATION = "command";
    private static final long RECONNECT_PAUSE_NANOS = TimeUnit.SECONDS.toNanos(1);

    final String address;
    private final RedisClient redisClient;
    private final RedisURI uri;
    private final Duration timeout;
    private final String channel;
    private final RedisPubSubListener<String, String> listener;
    private final LockEvents events;
    // the client's clock: the pause between connection attempts is read on it, and the calls' waits
    private final Ticker ticker;

    private volatile StatefulRedisConnection<String, String> connection;
    private volatile StatefulRedisPubSubConnection<String, String> pubSub;
    private volatile RedisCalls calls;
    // guarded by this
    private CompletableFuture<Void> connecting;
    private long lastAttemptNanos;
    private boolean closed;

    RedlockNode(RedisClient redisClient, RedisURI uri, Duration timeout, String channel,
            RedisPubSubListener<String, String> listener, LockEvents events, Ticker ticker) {
        this.events = events;
        this.ticker = ticker;
        this.redisClient = redisClient;
        this.uri = uri;
        this.address = addressOf(uri);
        this.timeout = timeout;
        this.channel = channel;
        this.listener = listener;
    }

    /** How a node of {@code uri} is named in messages and in the {@code node} tag of its up gauge. */
    static String addressOf(RedisURI uri) {
        return uri.getHost() + ":" + uri.getPort();
    }

    /** Starts connecting unless connected or connecting; the future completes once both connections are up. */
    synchronized CompletableFuture<Void> connect() {
        if (calls != null) {
            return CompletableFuture.completedFuture(null);
        }
        if (connecting != null && !connecting.isDone()) {
            return connecting;
        }
        if (closed) {
            return CompletableFuture.failedFuture(new IllegalStateException("node " + address + " is closed"));
        }
        lastAttemptNanos = ticker.nanoTime();
        connecting = redisClient.connectAsync(Utf8Codec.INSTANCE, uri).toCompletableFuture()
                .thenCompose(commands -> {
                    commands.setTimeout(timeout);
                    return redisClient.connectPubSubAsync(Utf8Codec.INSTANCE, uri).toCompletableFuture()
                            .thenCompose(wakeUps -> {
                                wakeUps.setTimeout(timeout);
                                wakeUps.addListener(listener);
                                return wakeUps.async().subscribe(channel).toCompletableFuture()
                                        .thenRun(() -> connected(commands, wakeUps))
                                        .whenComplete((ok, error) -> {
                                            if (error != null) {
                                                wakeUps.closeAsync();
                                            }
                                        });
                            })
                            .whenComplete((ok, error) -> {
                                if (error != null) {
                                    commands.closeAsync();
                                }
                            });
                });
        connecting.whenComplete((ok, error) -> {
            if (error != null) {
                log.debug("Redlock node {}: connecting failed: {}", address, RedisFailures.unwrap(error).toString());
            }
        });
        return connecting;
    }

    private synchronized void connected(StatefulRedisConnection<String, String> commands,
            StatefulRedisPubSubConnection<String, String> wakeUps) {
        if (closed) {
            commands.closeAsync();
            wakeUps.closeAsync();
            return;
        }
        this.connection = commands;
        this.pubSub = wakeUps;
        events.nodeConnected(address, commands);
        this.calls = new RedisCalls(commands, commands.async(), timeout, address,
                redisClient.getResources().eventExecutorGroup(),
                redisClient.getOptions().getTimeoutOptions().isTimeoutCommands(), ticker::nanoTime);
    }

    /** Runs a script by EVALSHA (EVAL after NOSCRIPT); see {@link RedisCalls#run}. */
    <T> CompletableFuture<T> run(LuaScript script, ScriptOutputType type, String[] keys, String... args) {
        RedisCalls connected = calls;
        return connected == null ? notConnected() : connected.run(script, type, keys, args);
    }

    /** The hash at {@code key} (HGETALL), waiting at most the command timeout. */
    Map<String, String> hashAt(String key, String operation) {
        RedisCalls connected = calls;
        if (connected == null) {
            return this.<Map<String, String>>notConnected().join();
        }
        return connected.await(connected.commands().hgetall(key), operation, null);
    }

    /** Deletes {@code key}, without waiting. */
    CompletableFuture<Long> delete(String key) {
        RedisCalls connected = calls;
        return connected == null ? notConnected() : connected.commands().del(key).toCompletableFuture();
    }

    /** Runs a script by EVAL, in order with every command sent before it on this node; see {@link RedisCalls#runInOrder}. */
    <T> CompletableFuture<T> runInOrder(LuaScript script, ScriptOutputType type, String[] keys, String... args) {
        RedisCalls connected = calls;
        return connected == null ? notConnected() : connected.runInOrder(script, type, keys, args);
    }

    /**
     * Every key matching {@code match}, page by page with SCAN (never KEYS), in the calling
     * thread; each page waits at most the command timeout.
     *
     * @throws RedisUnavailableException if the node is not connected or does not answer
     */
    List<String> scan(String match) {
        RedisCalls connected = calls;
        if (connected == null) {
            return this.<List<String>>notConnected().join();
        }
        ScanArgs args = ScanArgs.Builder.matches(match).limit(1000);
        List<String> keys = new ArrayList<>();
        KeyScanCursor<String> page = null;
        do {
            ScanCursor cursor = page == null ? ScanCursor.INITIAL : page;
            page = connected.await(connected.commands().scan(cursor, args), "list", null);
            keys.addAll(page.getKeys());
        } while (!page.isFinished());
        return keys;
    }

    /** Sends a PING; completes with its reply. */
    CompletableFuture<String> ping() {
        RedisCalls connected = calls;
        return connected == null ? notConnected() : connected.commands().ping().toCompletableFuture();
    }

    /** What went wrong with one command on this node, in words that name the node. */
    String describe(Throwable error) {
        Throwable cause = RedisFailures.unwrap(error);
        if (cause instanceof RelockException) {
            return cause.getMessage();
        }
        RedisCalls connected = calls;
        if (connected == null) {
            return "Redis at " + address + ": " + cause;
        }
        String message = connected.failure(cause, OPERATION, null).getMessage();
        return message.startsWith(OPERATION + ": ") ? message.substring(OPERATION.length() + 2) : message;
    }

    private <T> CompletableFuture<T> notConnected() {
        synchronized (this) {
            if (!closed && (connecting == null || connecting.isDone())
                    && ticker.nanoTime() - lastAttemptNanos > RECONNECT_PAUSE_NANOS) {
                connect();
            }
        }
        return CompletableFuture.failedFuture(new RedisUnavailableException(
                "Redis at " + address + " is not connected (connecting again in the background)", null));
    }

    boolean isConnected() {
        return calls != null;
    }

    @Override
    public void close() {
        StatefulRedisConnection<String, String> commands;
        StatefulRedisPubSubConnection<String, String> wakeUps;
        synchronized (this) {
            closed = true;
            commands = connection;
            wakeUps = pubSub;
        }
        if (wakeUps != null) {
            wakeUps.close();
        }
        if (commands != null) {
            commands.close();
        }
    }

    @Override
    public String toString() {
        return "RedlockNode[" + address + "]";
    }
}
