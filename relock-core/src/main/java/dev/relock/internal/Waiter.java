package dev.relock.internal;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One thread waiting for one lock. The waiting thread parks in {@link #await}; the pub/sub thread
 * wakes it through {@link #wake} (its turn has come) or {@link #checkWithin} (it is next in line).
 *
 * <p>Signals that arrive between {@link #reset} and {@link #await} are kept, so a release that
 * happens while the thread is still reading the reply of its last attempt is never missed.
 * Parking uses a {@link ReentrantLock}, not {@code synchronized}, so a virtual thread does not pin
 * its carrier.
 */
final class Waiter {

    final LockKeys keys;
    final LockMode mode;

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition signalled = lock.newCondition();

    // guarded by lock
    private boolean woken;
    // guarded by lock; System.nanoTime() by which the waiter must try again, when hasCheckBy
    private long checkBy;
    private boolean hasCheckBy;

    Waiter(LockKeys keys, LockMode mode) {
        this.keys = keys;
        this.mode = mode;
    }

    /** Forgets earlier signals; called by the waiting thread just before each attempt. */
    void reset() {
        lock.lock();
        try {
            woken = false;
            hasCheckBy = false;
        } finally {
            lock.unlock();
        }
    }

    /** The lock may be free for this waiter now. */
    void wake() {
        lock.lock();
        try {
            woken = true;
            signalled.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** This waiter should try again within {@code nanos}, if nothing wakes it sooner. */
    void checkWithin(long nanos) {
        lock.lock();
        try {
            long by = System.nanoTime() + nanos;
            if (!hasCheckBy || by - checkBy < 0) {
                checkBy = by;
                hasCheckBy = true;
            }
            signalled.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Parks until woken, until {@code untilNanos} (a {@link System#nanoTime()} value) or until a
     * requested check is due, whichever comes first.
     *
     * @throws InterruptedException if the thread is interrupted while parked
     */
    void await(long untilNanos) throws InterruptedException {
        lock.lock();
        try {
            while (!woken) {
                long until = hasCheckBy && checkBy - untilNanos < 0 ? checkBy : untilNanos;
                long left = until - System.nanoTime();
                if (left <= 0) {
                    return;
                }
                signalled.awaitNanos(Math.min(left, TimeUnit.SECONDS.toNanos(60)));
            }
        } finally {
            lock.unlock();
        }
    }
}
