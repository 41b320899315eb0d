package dev.relock.internal.redlock;

import dev.relock.RedisUnavailableException;
import dev.relock.RelockSettings;
import dev.relock.internal.engine.RedisConnections;
import dev.relock.internal.engine.Ticker;
import dev.relock.internal.engine.LockEvents;
import dev.relock.internal.script.LuaScript;
import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisConnectionStateListener;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.netty.util.Timer;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * The N independent masters of one Redlock client over a Lettuce client and resources of their own: connecting
 * them, sending one command to all of them at once (never one after another) with its replies counted as they come
 * ({@link Poll}), and shutting them down.
 *
 * <p>The node list is fixed at construction and a node's index in it names the node everywhere (polls, release
 * signals, restores). Any thread may send; the event executors ({@link #timer}) run the follow-ups of replies, never
 * an I/O thread. Waits, and a node's pause between connection attempts, are read on the client's {@link Ticker}.
 */
final class NodeSet {

    private static final Duration MIN_CONNECT_TIMEOUT = Duration.ofSeconds(5);

    private final ClientResources resources;
    private final RedisClient redisClient;
    private final List<RedlockNode> nodes;
    private final int majority;
    private final long timeoutNanos;
    private final Duration connectTimeout;
    private final Ticker ticker;
    // the listener of watchConnects, until unwatchConnects; set and cleared by the constructing and closing threads
    private volatile RedisConnectionStateListener connects;

    /**
     * The nodes of {@code uris}, not connected yet; each subscribes to {@code channel} with its listener from
     * {@code signals}, and tells {@code events} of its command connection.
     */
    NodeSet(List<RedisURI> uris, RelockSettings settings, String channel, ReleaseSignals signals, LockEvents events,
            Ticker ticker) {
        this.majority = uris.size() / 2 + 1;
        this.ticker = ticker;
        this.timeoutNanos = settings.commandTimeout().toNanos();
        this.resources = DefaultClientResources.create();
        this.redisClient = RedisClient.create(resources);
        // connecting (socket and handshake) may take longer than one command: the first
        // connections of a JVM load classes and start event loops; commands keep commandTimeout
        this.connectTimeout = settings.commandTimeout().compareTo(MIN_CONNECT_TIMEOUT) > 0
                ? settings.commandTimeout() : MIN_CONNECT_TIMEOUT;
        redisClient.setOptions(RedisConnections.clientOptions(settings.commandTimeout()).mutate()
                .socketOptions(SocketOptions.builder().connectTimeout(connectTimeout).build())
                .build());
        List<RedlockNode> created = new ArrayList<>();
        for (RedisURI uri : uris) {
            uri.setTimeout(connectTimeout);
            created.add(new RedlockNode(redisClient, uri, settings.commandTimeout(), channel,
                    signals.listenerOf(created.size()), events, ticker));
        }
        this.nodes = List.copyOf(created);
    }

    /** Connects every node at once and waits until each attempt ended; won when a majority connected. */
    Poll<Void> connect() {
        List<CompletableFuture<Void>> connecting = new ArrayList<>();
        nodes.forEach(node -> connecting.add(node.connect()));
        Poll<Void> connected = new Poll<>(nodes, connecting, majority, ok -> true, ticker);
        // every attempt ends by itself within the connect timeout (connect, handshake, subscribe)
        connected.awaitAll(2 * connectTimeout.toNanos() + timeoutNanos);
        return connected;
    }

    /** Runs {@code action} on an I/O thread whenever a node's connection comes up, until {@link #unwatchConnects}. */
    void watchConnects(Runnable action) {
        RedisConnectionStateListener listener = new RedisConnectionStateListener() {
            @Override
            public void onRedisConnected(RedisChannelHandler<?, ?> handler, SocketAddress address) {
                action.run();
            }
        };
        connects = listener;
        redisClient.addListener(listener);
    }

    void unwatchConnects() {
        RedisConnectionStateListener listener = connects;
        if (listener != null) {
            redisClient.removeListener(listener);
        }
    }

    /** Every node, in the order that names them. */
    List<RedlockNode> all() {
        return nodes;
    }

    RedlockNode node(int index) {
        return nodes.get(index);
    }

    int size() {
        return nodes.size();
    }

    /** {@code N/2 + 1}. */
    int majority() {
        return majority;
    }

    long timeoutNanos() {
        return timeoutNanos;
    }

    /**
     * The timer of waits and command timeouts: Lettuce's event executors, so no thread of ours sleeps; far timers
     * wait on {@link #wheel} and run here when they fire.
     */
    ScheduledExecutorService timer() {
        return resources.eventExecutorGroup();
    }

    /** The hashed wheel timer of the clients' resources: for far timers of waits (arming one wakes no thread). */
    Timer wheel() {
        return resources.timer();
    }

    /**
     * Sends a read-only or idempotent script to every node at once (EVALSHA, EVAL after
     * NOSCRIPT); a node's yes is a reply that passes {@code isYes}.
     */
    <T> Poll<T> sendToAll(LuaScript script, ScriptOutputType type, String[] keys, Predicate<T> isYes,
            String... args) {
        List<CompletableFuture<T>> replies = new ArrayList<>(nodes.size());
        for (RedlockNode node : nodes) {
            replies.add(node.run(script, type, keys, args));
        }
        return poll(replies, isYes);
    }

    /**
     * Sends a script that takes or extends a lock to every node at once, by EVAL: on each node it
     * runs after every command this client sent there before it and before every command sent
     * after it, even when the reply comes late or never (an EVALSHA's NOSCRIPT fallback would go
     * out later and could overtake the clean-up or release that follows).
     */
    <T> Poll<T> sendToAllInOrder(LuaScript script, ScriptOutputType type, String[] keys, Predicate<T> isYes,
            String... args) {
        return poll(sendToEachInOrder(script, type, keys, args), isYes);
    }

    /** As {@link #sendToAllInOrder}, for a batch: one reply of every node, by node. */
    <T> List<CompletableFuture<T>> sendToEachInOrder(LuaScript script, ScriptOutputType type, String[] keys,
            String... args) {
        List<CompletableFuture<T>> replies = new ArrayList<>(nodes.size());
        for (RedlockNode node : nodes) {
            replies.add(node.runInOrder(script, type, keys, args));
        }
        return replies;
    }

    /** Counts {@code replies}, one per node in node order. */
    <T> Poll<T> poll(List<CompletableFuture<T>> replies, Predicate<T> isYes) {
        return new Poll<>(nodes, replies, majority, isYes, ticker);
    }

    /** The exception for a poll that fewer than a majority of the nodes answered. */
    RedisUnavailableException unavailable(String operation, String lockName, Poll<?> poll) {
        String what = lockName == null ? operation : operation + " of lock '" + lockName + "'";
        return new RedisUnavailableException(what + ": " + poll.answered() + " of " + nodes.size()
                + " Redlock nodes answered, a majority needs " + majority + ": " + String.join("; ", poll.failures()),
                null);
    }

    /**
     * Sends a PING to every node and returns the time until a majority answered.
     *
     * @throws RedisUnavailableException if fewer than a majority answered within the command timeout
     */
    Duration ping() {
        long sent = ticker.nanoTime();
        List<CompletableFuture<String>> replies = new ArrayList<>(nodes.size());
        for (RedlockNode node : nodes) {
            replies.add(node.ping());
        }
        Poll<String> poll = poll(replies, reply -> true);
        poll.awaitDecision(timeoutNanos);
        if (!poll.won()) {
            throw unavailable("ping", null, poll);
        }
        return Duration.ofNanos(ticker.nanoTime() - sent);
    }

    /** Closes every node's connections, then the Lettuce client and its resources. */
    void shutDown() {
        nodes.forEach(RedlockNode::close);
        RedisConnections.shutdown(redisClient, Duration.ofSeconds(2));
        resources.shutdown(0, 2, TimeUnit.SECONDS);
    }

    @Override
    public String toString() {
        List<String> addresses = new ArrayList<>();
        nodes.forEach(node -> addresses.add(node.address));
        return addresses.toString();
    }
}
