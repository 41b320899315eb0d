package dev.relock.internal;

import dev.relock.LockHandle;
import dev.relock.RelockLock;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * The acquiring methods of {@link RelockLock}, for every lock that keeps its holds as
 * {@link Hold}s: each maps onto one {@link #acquire(long, boolean, long, boolean)} of the
 * subclass, which decides how a lock is taken (one Redis, or a Redlock majority). Stateless.
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
