package dev.relock.internal.redlock;

import io.lettuce.core.pubsub.RedisPubSubAdapter;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The release announcements of every node, routed to the threads waiting for that lock. release.lua
 * publishes, on one channel per key prefix, the lock key followed by the owner id of the waiting
 * writer whose turn it is now; a lock key ends with the '}' of its hash tag and an owner id has no
 * '}', so the last '}' splits the two. A signal completes with that owner id, or "" when it is
 * nobody's turn.
 *
 * <p>A waiting thread takes a fresh signal with {@link #expect} <em>before</em> each attempt, so a
 * release that happens while its attempt is under way still wakes it, and drops it with
 * {@link #forget} after. The nodes' messages of one release arrive one by one, in any order
 * between nodes, so a signal may complete with an older release's turn; a waiting writer that
 * {@link #watchTurns watches} its turns can ask whether any message named it since a given time
 * ({@link #namedSince}). Messages arrive on Lettuce event-loop threads, which must not block:
 * routing only completes futures. Every client receives every release of its prefix, once per
 * node that saw it; duplicates only wake a waiter early.
 */
final class ReleaseSignals extends RedisPubSubAdapter<String, String> {

    private final Map<String, Set<CompletableFuture<String>>> byLockKey = new ConcurrentHashMap<>();
    // lock key + owner id of a watching writer (the message that names it) -> System.nanoTime() of
    // the last such message, or of the watch's start minus 1
    private final Map<String, Long> turns = new ConcurrentHashMap<>();

    CompletableFuture<String> expect(String lockKey) {
        CompletableFuture<String> signal = new CompletableFuture<>();
        byLockKey.compute(lockKey, (key, signals) -> {
            Set<CompletableFuture<String>> set = signals == null ? ConcurrentHashMap.newKeySet() : signals;
            set.add(signal);
            return set;
        });
        return signal;
    }

    void forget(String lockKey, CompletableFuture<String> signal) {
        byLockKey.computeIfPresent(lockKey, (key, signals) -> {
            signals.remove(signal);
            return signals.isEmpty() ? null : signals;
        });
    }

    /** From now until {@link #unwatchTurns}, messages that give {@code owner} the turn are noted. */
    void watchTurns(String lockKey, String owner) {
        turns.put(lockKey + owner, System.nanoTime() - 1);
    }

    void unwatchTurns(String lockKey, String owner) {
        turns.remove(lockKey + owner);
    }

    /** Whether a message gave a watching {@code owner} the turn after {@code nanos} (System.nanoTime()). */
    boolean namedSince(String lockKey, String owner, long nanos) {
        Long at = turns.get(lockKey + owner);
        return at != null && at - nanos > 0;
    }

    /** Wakes every waiting thread, so each sees the client closed. */
    void wakeAll() {
        byLockKey.values().forEach(signals -> signals.forEach(signal -> signal.complete("")));
    }

    @Override
    public void message(String channel, String message) {
        turns.computeIfPresent(message, (named, at) -> System.nanoTime());
        int end = message.lastIndexOf('}') + 1;
        Set<CompletableFuture<String>> signals = byLockKey.get(message.substring(0, end));
        if (signals != null) {
            String turn = message.substring(end);
            signals.forEach(signal -> signal.complete(turn));
        }
    }
}
