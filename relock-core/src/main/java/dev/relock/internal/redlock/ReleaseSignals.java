package dev.relock.internal.redlock;

import dev.relock.internal.engine.Ticker;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.RedisPubSubListener;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The release announcements of every node, routed to the threads waiting for that lock. release.lua
 * publishes, on one channel per key prefix, the lock key followed by the owner id of the waiting
 * writer whose turn it is now, or by '{@code <owner id> <fencing token> <attempt id>}' when it made
 * that writer the holder there (a grant on release); a lock key ends with the '}' of its hash tag and
 * an owner id has no '}' and no space, so the last '}' and the first space after it split the parts. A
 * signal completes with what follows the lock key: "" when it is nobody's turn.
 *
 * <p>A waiting thread takes a fresh signal with {@link #expect} <em>before</em> each attempt, so a
 * release that happens while its attempt is under way still wakes it, and drops it with
 * {@link #forget} after. The nodes' messages of one release arrive one by one, in any order
 * between nodes, so a signal may complete with an older release's turn; a waiting writer that
 * {@link #watchTurns watches} its turns can ask whether any message gave it the turn since a given
 * time ({@link #namedSince}), and is told each grant with the node that made it (before the signals
 * that message completes). Messages arrive on Lettuce event-loop threads, which must
 * not block: routing only completes futures and hands grants on. Every client receives every release
 * of its prefix, once per node that saw it, through that node's {@link #listenerOf listener};
 * duplicates only wake a waiter early. Times are readings of the client's {@link Ticker}.
 */
final class ReleaseSignals {

    /** Told of the grants on release to a watching writer; called on a Lettuce event-loop thread. */
    interface Grants {
        /** Node {@code node} made the writer the holder for its attempt {@code attemptId}, with {@code token}. */
        void granted(int node, long token, String attemptId);
    }

    /** A watching writer: its grants' recipient, and when a message last gave it the turn (ticker). */
    private static final class Watch {
        final Grants grants;
        volatile long namedAt;

        Watch(Grants grants, long namedAt) {
            this.grants = grants;
            this.namedAt = namedAt;
        }
    }

    /**
     * The signals taken for one lock key, and the grant its nodes announced last. A release that grants the lock
     * goes to every node at once and each announces the same grant, '{@code <owner id> <token> <attempt id>}' (a
     * node grants an attempt once, so another grant has other text): only the first of them completes the signals,
     * and the copies that follow from the other nodes wake nobody again. The granted writer still counts every
     * node's grant ({@link Grants}). Lives while a signal of the key is taken.
     */
    private static final class Waiting {
        final Set<CompletableFuture<String>> signals = ConcurrentHashMap.newKeySet();
        final AtomicReference<String> lastGrant = new AtomicReference<>();
    }

    private final Ticker ticker;
    private final Map<String, Waiting> byLockKey = new ConcurrentHashMap<>();
    // lock key + owner id of a watching writer -> its watch
    private final Map<String, Watch> turns = new ConcurrentHashMap<>();

    ReleaseSignals(Ticker ticker) {
        this.ticker = ticker;
    }

    /**
     * Whether {@code turn}, what a signal completed with, is a grant to {@code owner}: '{@code <owner id> <token>
     * <attempt id>}'.
     */
    static boolean grantsTo(String turn, String owner) {
        return turn.length() > owner.length() && turn.startsWith(owner) && turn.charAt(owner.length()) == ' ';
    }

    /**
     * The listener of node {@code node}'s pub/sub connection (its index in the client's list of nodes). Each
     * subscription after the first (Lettuce subscribes again once the connection is back) wakes every waiting
     * acquisition ({@link #wakeAll}): a grant or turn announced while the connection was down went unheard, and its
     * writer finds the lock its own where it was granted when it tries.
     */
    RedisPubSubListener<String, String> listenerOf(int node) {
        AtomicBoolean subscribedBefore = new AtomicBoolean();
        return new RedisPubSubAdapter<>() {
            @Override
            public void message(String channel, String message) {
                announced(node, message);
            }

            @Override
            public void subscribed(String channel, long count) {
                if (subscribedBefore.getAndSet(true)) {
                    wakeAll();
                }
            }
        };
    }

    CompletableFuture<String> expect(String lockKey) {
        CompletableFuture<String> signal = new CompletableFuture<>();
        byLockKey.compute(lockKey, (key, waiting) -> {
            Waiting taken = waiting == null ? new Waiting() : waiting;
            taken.signals.add(signal);
            return taken;
        });
        return signal;
    }

    void forget(String lockKey, CompletableFuture<String> signal) {
        byLockKey.computeIfPresent(lockKey, (key, waiting) -> {
            waiting.signals.remove(signal);
            return waiting.signals.isEmpty() ? null : waiting;
        });
    }

    /**
     * From now until {@link #unwatchTurns}, messages that give {@code owner} the turn are noted, and its grants go
     * to {@code grants}.
     */
    void watchTurns(String lockKey, String owner, Grants grants) {
        turns.put(lockKey + owner, new Watch(grants, ticker.nanoTime() - 1));
    }

    void unwatchTurns(String lockKey, String owner) {
        turns.remove(lockKey + owner);
    }

    /** Whether a message gave a watching {@code owner} the turn (not a grant) after {@code nanos} (ticker). */
    boolean namedSince(String lockKey, String owner, long nanos) {
        Watch watch = turns.get(lockKey + owner);
        return watch != null && watch.namedAt - nanos > 0;
    }

    /**
     * Wakes every waiting acquisition as for a release that names nobody: at close, so each sees the client closed;
     * after a pub/sub connection came back, so each tries again.
     */
    void wakeAll() {
        byLockKey.values().forEach(waiting -> waiting.signals.forEach(signal -> signal.complete("")));
    }

    private void announced(int node, String message) {
        int end = message.lastIndexOf('}') + 1;
        String lockKey = message.substring(0, end);
        int space = message.indexOf(' ', end);
        String turn = space < 0 ? message.substring(end) : message.substring(end, space);
        int second = space < 0 ? -1 : message.indexOf(' ', space + 1);
        Watch watch = turn.isEmpty() ? null : turns.get(lockKey + turn);
        if (watch != null) {
            if (second > 0) {
                watch.grants.granted(node, Long.parseLong(message, space + 1, second, 10),
                        message.substring(second + 1));
            } else {
                watch.namedAt = ticker.nanoTime();
            }
        }
        Waiting waiting = byLockKey.get(lockKey);
        if (waiting != null && (second < 0 || !message.equals(waiting.lastGrant.getAndSet(message)))) {
            String announced = message.substring(end);
            waiting.signals.forEach(signal -> signal.complete(announced));
        }
    }
}
