package dev.relock;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * A distributed counting semaphore whose permits are leased: each acquisition is a
 * {@link PermitHandle} holding its permits under a lease (renewed by the client's lease keeper
 * unless an explicit lease is given), so the permits of a crashed client come back when its lease
 * runs out. Closing the handle gives them back and wakes the next waiter.
 *
 * <p>Never more permits are out than set, under any interleaving: every change is one script in
 * Redis. Waiters are served first come, first served (a large request at the head waits, and
 * smaller ones behind it wait too). The number of permits lives in Redis, shared by every client:
 * set it once with {@link #trySetPermits}, change it with {@link #addPermits}.
 *
 * <p>A semaphore and a lock may share a name; they are different things.
 */
public interface RelockSemaphore {

    /** The semaphore's name as given to {@link RelockClient#semaphore(String)}. */
    String name();

    /**
     * Sets the number of permits if no number is set yet.
     *
     * @return whether this call set it
     * @throws IllegalArgumentException if permits is negative
     */
    boolean trySetPermits(int permits);

    /**
     * Adds (or with a negative delta takes away) permits; waiters are woken when permits are added.
     * Taking away permits that are held makes {@link #availablePermits()} negative until they come
     * back.
     *
     * @return the number of permits now
     * @throws IllegalStateException if no number of permits is set, or the result would be negative
     */
    int addPermits(int delta);

    /**
     * The permits free now (the number set minus those held under live leases); 0 for a semaphore whose number
     * was never set ({@link RelockClient#inspectSemaphore} tells the two apart: its permits are -1 then).
     */
    int availablePermits();

    /**
     * Acquires one permit, waiting as long as it takes, under a renewed lease: {@link #acquire(int) acquire(1)}.
     *
     * @throws IllegalStateException if no number of permits is set
     * @throws IllegalArgumentException if the semaphore has no permits at all
     * @throws InterruptedException if interrupted while waiting
     */
    default PermitHandle acquire() throws InterruptedException {
        return acquire(1);
    }

    /**
     * Acquires {@code permits}, waiting as long as it takes, under a renewed lease.
     *
     * @throws IllegalArgumentException if permits is not positive or more than the semaphore has
     * @throws IllegalStateException if no number of permits is set
     * @throws InterruptedException if interrupted while waiting
     */
    PermitHandle acquire(int permits) throws InterruptedException;

    /**
     * Acquires {@code permits} under a renewed lease, waiting up to {@code wait}; a wait of zero or
     * less tries once. While Redis is unavailable the wait tries again until its deadline, as
     * {@link RelockLock#tryLock(long, java.util.concurrent.TimeUnit)} does.
     *
     * @return the handle, or empty if the permits were not free within {@code wait}
     * @throws RedisUnavailableException if the last try of the wait (the only one, for a wait of zero)
     *     found Redis unavailable; never later than the wait plus the command timeout
     */
    Optional<PermitHandle> tryAcquire(int permits, Duration wait) throws InterruptedException;

    /** One permit, waiting up to {@code wait}: {@link #tryAcquire(int, Duration) tryAcquire(1, wait)}. */
    default Optional<PermitHandle> tryAcquire(Duration wait) throws InterruptedException {
        return tryAcquire(1, wait);
    }

    /** As {@link #tryAcquire(int, Duration)}, with an explicit lease that is not renewed. */
    Optional<PermitHandle> tryAcquire(int permits, Duration wait, Duration lease) throws InterruptedException;

    /**
     * Takes every permit free now, in one script, as one acquisition: the handle holds them under a renewed lease,
     * like {@link #acquire(int)}'s, and {@link PermitHandle#permits()} says how many they are. Closing it gives them
     * back; a holder that dies gives them back when its lease runs out. Without waiting: like an acquisition with no
     * wait, it never goes before waiters queued for permits, so it takes none while any wait (one woken for its turn
     * included), nor when none are free.
     *
     * <p>The drained permits are taken, not removed: the semaphore's number stays, and {@link #availablePermits()}
     * is 0 (or less) until they come back. To shrink the semaphore for good, use {@link #addPermits} with a negative
     * delta.
     *
     * @return the handle of the permits taken, or empty when none were taken
     * @throws IllegalStateException if no number of permits is set
     * @throws RelockException if Redis cannot be reached within the command timeout
     */
    Optional<PermitHandle> drainPermits();

    /**
     * As {@link #acquire(int)}, but returns at once and no thread waits: the stage completes with
     * the handle, retrying Redis trouble with back-off. The threads that complete it, cancelling
     * and closing the client are as for {@link RelockLock#acquireAsync()}.
     *
     * @throws IllegalArgumentException if permits is not positive
     * @throws IllegalStateException if the client is closed
     */
    CompletionStage<PermitHandle> acquireAsync(int permits);

    /**
     * As {@link #tryAcquire(int, Duration)}, but returns at once: the stage completes with the
     * handle, with empty when the wait ended with the permits taken, or exceptionally with
     * {@link RedisUnavailableException} when the last try of the wait found Redis unavailable (with
     * {@link RelockException} when Redis refused the command).
     */
    CompletionStage<Optional<PermitHandle>> tryAcquireAsync(int permits, Duration wait);

    /** As {@link #tryAcquireAsync(int, Duration)}, with an explicit lease that is not renewed. */
    CompletionStage<Optional<PermitHandle>> tryAcquireAsync(int permits, Duration wait, Duration lease);
}
