package dev.relock.internal.redlock;

import io.lettuce.core.pubsub.RedisPubSubAdapter;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The release announcements of every node (release.lua publishes the lock key on one channel per
 * key prefix), routed to the threads waiting for that lock.
 *
 * <p>A waiting thread takes a fresh signal with {@link #expect} <em>before</em> each attempt, so a
 * release that happens while its attempt is under way still wakes it, and drops it with
 * {@link #forget} after. Messages arrive on Lettuce event-loop threads, which must not block:
 * routing only completes futures. Every client receives every release of its prefix, once per
 * node that saw it; duplicates only wake a waiter early.
 */
final class ReleaseSignals extends RedisPubSubAdapter<String, String> {

    private final Map<String, Set<CompletableFuture<Void>>> byLockKey = new ConcurrentHashMap<>();

    CompletableFuture<Void> expect(String lockKey) {
        CompletableFuture<Void> signal = new CompletableFuture<>();
        byLockKey.compute(lockKey, (key, signals) -> {
            Set<CompletableFuture<Void>> set = signals == null ? ConcurrentHashMap.newKeySet() : signals;
            set.add(signal);
            return set;
        });
        return signal;
    }

    void forget(String lockKey, CompletableFuture<Void> signal) {
        byLockKey.computeIfPresent(lockKey, (key, signals) -> {
            signals.remove(signal);
            return signals.isEmpty() ? null : signals;
        });
    }

    /** Wakes every waiting thread, so each sees the client closed. */
    void wakeAll() {
        byLockKey.values().forEach(signals -> signals.forEach(signal -> signal.complete(null)));
    }

    @Override
    public void message(String channel, String lockKey) {
        Set<CompletableFuture<Void>> signals = byLockKey.get(lockKey);
        if (signals != null) {
            signals.forEach(signal -> signal.complete(null));
        }
    }
}
