package dev.relock.shedlock;

import dev.relock.LeaseLostException;
import dev.relock.LockHandle;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One held job lock. Any thread may unlock or extend it, once (an extension hands the hold on to a
 * new lock, as ShedLock requires); the hold belongs to the handle, not to a thread.
 * {@code lockAtLeastFor} counts from {@code startNanos} (System.nanoTime() before the acquisition,
 * or before the extension that made this lock), never from wall-clock time.
 */
final class RelockSimpleLock implements SimpleLock {

    private static final Logger log = LoggerFactory.getLogger(RelockSimpleLock.class);

    private final LockHandle handle;
    private final Duration lockAtLeastFor;
    private final long startNanos;
    // set by the unlock, or the extension, that ends this lock's part
    private final AtomicBoolean ended = new AtomicBoolean();

    RelockSimpleLock(LockHandle handle, Duration lockAtLeastFor, long startNanos) {
        this.handle = handle;
        this.lockAtLeastFor = lockAtLeastFor;
        this.startNanos = startNanos;
    }

    /**
     * Gives up the lock, or leaves it taken until {@code lockAtLeastFor} has passed since it was
     * taken. A lease that ran out before (the job ran past {@code lockAtMostFor}, or the lease
     * was lost) is logged, not thrown: ShedLock's own providers do not fail the job for it.
     *
     * @throws IllegalStateException if this lock was unlocked or extended before
     */
    @Override
    public void unlock() {
        endHere();
        Duration keepFor = lockAtLeastFor.minusNanos(System.nanoTime() - startNanos);
        try {
            handle.releaseAfter(keepFor);
        } catch (LeaseLostException e) {
            log.warn("Lock '{}' was lost before the job finished: {}", handle.name(), e.getMessage());
        }
    }

    /**
     * Extends the lock to at least {@code lockAtMostFor} from now ({@code LockHandle.extendLease}):
     * with a lease renewed while the job runs, every renewal from then on is for at least that long
     * too. Never shortens the lease. The new lock's {@code lockAtLeastFor} counts from now. This lock
     * is used up either way, unless Redis could not be reached.
     *
     * @return the new lock, or empty if the lease was lost (it ran out, or was lost in Redis): the
     *     hold is given up then, and the lease-lost listener was told
     * @throws IllegalStateException if this lock was unlocked or extended before
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if lockAtMostFor is not positive, lockAtLeastFor is negative,
     *     or lockAtLeastFor is longer than lockAtMostFor
     * @throws dev.relock.RelockException if Redis did not answer within the client's command timeout;
     *     this lock is then still held and usable
     */
    @Override
    public Optional<SimpleLock> extend(Duration lockAtMostFor, Duration lockAtLeastFor) {
        Objects.requireNonNull(lockAtMostFor, "lockAtMostFor");
        Objects.requireNonNull(lockAtLeastFor, "lockAtLeastFor");
        if (lockAtMostFor.isZero() || lockAtMostFor.isNegative()) {
            throw new IllegalArgumentException("lockAtMostFor of an extension of lock '" + handle.name()
                    + "' must be positive, was " + lockAtMostFor);
        }
        if (lockAtLeastFor.isNegative() || lockAtLeastFor.compareTo(lockAtMostFor) > 0) {
            throw new IllegalArgumentException("lockAtLeastFor of an extension of lock '" + handle.name()
                    + "' must be between zero and lockAtMostFor (" + lockAtMostFor + "), was " + lockAtLeastFor);
        }
        endHere();
        long extendedAt = System.nanoTime();
        try {
            handle.extendLease(lockAtMostFor);
        } catch (LeaseLostException e) {
            log.warn("Lock '{}' could not be extended: {}", handle.name(), e.getMessage());
            giveUpLost();
            return Optional.empty();
        } catch (RuntimeException e) {
            // nothing changed: this lock may still be unlocked or extended
            ended.set(false);
            throw e;
        }
        return Optional.of(new RelockSimpleLock(handle, lockAtLeastFor, extendedAt));
    }

    /** Takes the lost hold out of the client's table; the loss was told when it was found. */
    private void giveUpLost() {
        try {
            handle.close();
        } catch (LeaseLostException expected) {
            // the close of a lost hold says so once more
        }
    }

    private void endHere() {
        if (!ended.compareAndSet(false, true)) {
            throw new IllegalStateException("Lock '" + handle.name() + "' was already unlocked or extended");
        }
    }

    @Override
    public String toString() {
        return "RelockSimpleLock{" + handle.name() + ", " + handle.state() + "}";
    }
}
