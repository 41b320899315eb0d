package dev.relock.internal.single;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;

/**
 * The threads of this client that wait for count-down latches, by latch key, and the routing of the latches'
 * wake-ups ({@code 'O'} messages, see latch.lua) to them.
 *
 * <p>A waiter is entered before its first read of the latch is sent and left after its wait ends, so a wake-up
 * that follows any of its reads finds it. A wake-up for the round the waiter saw armed opens its wait without a
 * round trip; any other wake-up, a resubscription of the client's channel (messages published while it was down
 * reached nobody) and the client's close only make it read the latch again.
 *
 * <p>Threads: {@link #opened}, {@link #wakeAll} run on Lettuce I/O threads and never block; the rest on the
 * waiting threads and the closing one.
 */
final class LatchWaits {

    /** One thread waiting for one latch. */
    static final class Waiter implements ChannelWaiter {
        final Thread thread;
        final String key;
        // the round (latch.lua) the waiter found armed at its first read; written once, by the waiting thread
        volatile String round;
        // a wake-up for that round came: the latch opened
        volatile boolean opened;
        // something may have changed: the waiting thread reads the latch again
        volatile boolean recheck;

        Waiter(Thread thread, String key) {
            this.thread = thread;
            this.key = key;
        }

        @Override
        public void wake() {
            recheck = true;
            LockSupport.unpark(thread);
        }
    }

    private final Map<String, Set<Waiter>> byKey = new ConcurrentHashMap<>();

    void enter(Waiter waiter) {
        byKey.compute(waiter.key, (key, waiters) -> {
            Set<Waiter> set = waiters != null ? waiters : ConcurrentHashMap.newKeySet();
            set.add(waiter);
            return set;
        });
    }

    void leave(Waiter waiter) {
        byKey.computeIfPresent(waiter.key, (key, waiters) -> {
            waiters.remove(waiter);
            return waiters.isEmpty() ? null : waiters;
        });
    }

    /** The latch at {@code key} reached zero in {@code round}. Pub/sub thread. */
    void opened(String key, String round) {
        Set<Waiter> waiters = byKey.get(key);
        if (waiters == null) {
            return;
        }
        for (Waiter waiter : waiters) {
            if (round.equals(waiter.round)) {
                waiter.opened = true;
                LockSupport.unpark(waiter.thread);
            } else {
                waiter.wake();
            }
        }
    }

    /** Every waiter reads its latch again: wake-ups may have been lost, or the client closes. */
    void wakeAll() {
        byKey.values().forEach(waiters -> waiters.forEach(Waiter::wake));
    }

    /** How many threads of this client wait for the latch at {@code key} now; for tests. */
    int waiting(String key) {
        Set<Waiter> waiters = byKey.get(key);
        return waiters == null ? 0 : waiters.size();
    }
}
