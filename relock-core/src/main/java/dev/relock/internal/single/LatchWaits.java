package dev.relock.internal.single;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The waits of this client for count-down latches, by latch key, and the routing of the latches' wake-ups
 * ({@code 'O'} messages, see latch.lua) to them.
 *
 * <p>A waiter is entered before its first read of the latch is sent and left after its wait ends, so a wake-up
 * that follows any of its reads finds it. A wake-up for the round the waiter saw armed opens its wait without a
 * round trip; any other wake-up, a resubscription of the client's channel (messages published while it was down
 * reached nobody) and the client's close only make it read the latch again.
 *
 * <p>Threads: {@link #opened}, {@link #wakeAll} run on Lettuce I/O threads (and the closing thread) and never block;
 * {@link #enter} and {@link #leave} run where the waits handle their events.
 */
final class LatchWaits {

    /** One wait for one latch ({@link LatchAwait}). */
    interface Waiter extends ChannelWaiter {

        /** The key of the latch it waits for. */
        String key();

        /** The latch reached zero in {@code round}: the wait is over if that is the round it saw armed. Never blocks. */
        void opened(String round);
    }

    private final Map<String, Set<Waiter>> byKey = new ConcurrentHashMap<>();

    void enter(Waiter waiter) {
        byKey.compute(waiter.key(), (key, waiters) -> {
            Set<Waiter> set = waiters != null ? waiters : ConcurrentHashMap.newKeySet();
            set.add(waiter);
            return set;
        });
    }

    void leave(Waiter waiter) {
        byKey.computeIfPresent(waiter.key(), (key, waiters) -> {
            waiters.remove(waiter);
            return waiters.isEmpty() ? null : waiters;
        });
    }

    /** The latch at {@code key} reached zero in {@code round}. Pub/sub thread. */
    void opened(String key, String round) {
        Set<Waiter> waiters = byKey.get(key);
        if (waiters != null) {
            waiters.forEach(waiter -> waiter.opened(round));
        }
    }

    /** Every waiter reads its latch again: wake-ups may have been lost, or the client closes. */
    void wakeAll() {
        byKey.values().forEach(waiters -> waiters.forEach(Waiter::wake));
    }

    /** How many waits of this client for the latch at {@code key} there are now; for tests. */
    int waiting(String key) {
        Set<Waiter> waiters = byKey.get(key);
        return waiters == null ? 0 : waiters.size();
    }
}
