package dev.relock.internal;

import dev.relock.LeaseState;
import dev.relock.LockHandle;
import dev.relock.RelockLock;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

/**
 * The acquiring methods of {@link RelockLock}, for every lock that keeps its holds as
 * {@link Hold}s: each blocking one maps onto one {@link #acquire(long, boolean, long, boolean)} of
 * the subclass, each asynchronous one onto a fresh {@link #handleOwned} acquisition; the subclass
 * decides how a lock is taken (one Redis, or a Redlock majority). Stateless.
 */
public abstract class HoldingLock implements RelockLock {

    /** The lease argument of {@link #acquire(long, boolean, long, boolean)} for the client's renewed lease. */
    protected static final long RENEWED = 0;

    /**
     * Acquires or re-enters the lock for the current thread.
     *
     * @param waitNanos how long to wait; zero or less tries once without waiting
     * @param forever wait without a deadline
     * @param leaseMillis an explicit lease, or {@link #RENEWED} for the client's renewed lease
     * @param interruptible whether an interrupt ends the wait with InterruptedException
     * @return the hold, or null if the wait ended first
     */
    protected abstract Hold acquire(long waitNanos, boolean forever, long leaseMillis, boolean interruptible)
            throws InterruptedException;

    /** A handle whose close() gives up one hold of {@code hold}. */
    protected abstract LockHandle handleOf(Hold hold);

    /** The current thread's hold on this lock in this client, or null. No round trip. */
    protected abstract Hold currentThreadsHold();

    /**
     * A fresh acquisition owned by the handle it will make, not by a thread: never a re-entry.
     *
     * @param leaseMillis an explicit lease, or {@link #RENEWED} for the client's renewed lease
     */
    protected abstract SteppedAcquisition handleOwned(long leaseMillis);

    @Override
    public void lock() {
        acquireUninterruptibly(RENEWED);
    }

    @Override
    public void lock(long lease, TimeUnit unit) {
        acquireUninterruptibly(leaseMillis(lease, unit));
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        acquire(Long.MAX_VALUE, true, RENEWED, true);
    }

    @Override
    public boolean tryLock() {
        try {
            return acquire(0, false, RENEWED, false) != null;
        } catch (InterruptedException e) {
            throw new AssertionError("a single attempt does not park", e);
        }
    }

    @Override
    public boolean tryLock(long wait, TimeUnit unit) throws InterruptedException {
        Objects.requireNonNull(unit, "unit");
        return acquire(unit.toNanos(wait), false, RENEWED, true) != null;
    }

    @Override
    public boolean tryLock(long wait, long lease, TimeUnit unit) throws InterruptedException {
        Objects.requireNonNull(unit, "unit");
        return acquire(unit.toNanos(wait), false, leaseMillis(lease, unit), true) != null;
    }

    @Override
    public LockHandle acquire() {
        return handleOf(acquireUninterruptibly(RENEWED));
    }

    @Override
    public Optional<LockHandle> tryAcquire(Duration wait) throws InterruptedException {
        Objects.requireNonNull(wait, "wait");
        return handle(acquire(Durations.saturatedNanos(wait), false, RENEWED, true));
    }

    @Override
    public Optional<LockHandle> tryAcquire(Duration wait, Duration lease) throws InterruptedException {
        Objects.requireNonNull(wait, "wait");
        Objects.requireNonNull(lease, "lease");
        long leaseMillis = leaseMillis(Durations.saturatedNanos(lease), TimeUnit.NANOSECONDS);
        return handle(acquire(Durations.saturatedNanos(wait), false, leaseMillis, true));
    }

    @Override
    public CompletionStage<LockHandle> acquireAsync() {
        return handleOwned(RENEWED).startAsync(Long.MAX_VALUE, true, this::handleOf, null);
    }

    @Override
    public CompletionStage<Optional<LockHandle>> tryAcquireAsync(Duration wait) {
        Objects.requireNonNull(wait, "wait");
        return handleOwned(RENEWED).startAsync(Durations.saturatedNanos(wait), false,
                hold -> Optional.of(handleOf(hold)), Optional.empty());
    }

    @Override
    public CompletionStage<Optional<LockHandle>> tryAcquireAsync(Duration wait, Duration lease) {
        Objects.requireNonNull(wait, "wait");
        Objects.requireNonNull(lease, "lease");
        long leaseMillis = leaseMillis(Durations.saturatedNanos(lease), TimeUnit.NANOSECONDS);
        return handleOwned(leaseMillis).startAsync(Durations.saturatedNanos(wait), false,
                hold -> Optional.of(handleOf(hold)), Optional.empty());
    }

    @Override
    public boolean isHeldByCurrentThread() {
        Hold hold = currentThreadsHold();
        // an explicit lease may have run out before the lease keeper's next look noticed
        return hold != null && hold.state() == LeaseState.HELD && !hold.leaseEndedBy(System.nanoTime());
    }

    @Override
    public int getHoldCount() {
        Hold hold = currentThreadsHold();
        return hold == null ? 0 : hold.holds();
    }

    private Optional<LockHandle> handle(Hold hold) {
        return hold == null ? Optional.empty() : Optional.of(handleOf(hold));
    }

    private Hold acquireUninterruptibly(long leaseMillis) {
        try {
            return acquire(Long.MAX_VALUE, true, leaseMillis, false);
        } catch (InterruptedException e) {
            throw new AssertionError("an uninterruptible wait does not throw InterruptedException", e);
        }
    }

    /** Why the thread holding the read lock of {@code name} may not take its write lock. */
    protected static IllegalMonitorStateException upgradeRefused(String name) {
        return new IllegalMonitorStateException("the current thread holds the read lock of '" + name
                + "' and asks for its write lock: upgrading would deadlock with any other reader doing the same;"
                + " release the read lock first");
    }

    /** "lock 'name'" or "read lock 'name'", for messages. */
    protected static String describe(LockMode mode, String name) {
        return mode == LockMode.WRITE ? "lock '" + name + "'" : "read lock '" + name + "'";
    }

    /**
     * An explicit lease in milliseconds, at least 1.
     *
     * @throws IllegalArgumentException if not positive (subclasses may refuse more)
     */
    protected long leaseMillis(long lease, TimeUnit unit) {
        Objects.requireNonNull(unit, "unit");
        if (lease <= 0) {
            throw new IllegalArgumentException("lease of lock '" + name() + "' must be positive: " + lease + " " + unit);
        }
        return Math.max(1, unit.toMillis(lease));
    }
}
