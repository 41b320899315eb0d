package dev.relock;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.locks.Lock;

/**
 * Several exclusive locks taken together: all of them or none.
 *
 * <p>The locks are taken one by one in one global order (by their Redis keys), the same in every
 * client, so two multi-locks over overlapping names never wait for each other in a circle. If a
 * lock cannot be had within the wait, those already taken are released before the call returns.
 * Each lock is the same as {@link RelockClient#lock(String)} of its name, with its own lease,
 * renewal and fencing token.
 *
 * <p>Redis being unavailable: {@link #lock()} and {@link #acquire()} keep trying; a wait with a
 * deadline ({@link #tryLock(long, java.util.concurrent.TimeUnit)}, {@link #tryAcquire(Duration)}) keeps
 * trying until its deadline, as each lock's does, and then throws {@link RedisUnavailableException} if
 * its last try still found Redis unavailable (giving back what it took); a single try
 * ({@link #tryLock()}, a wait of zero) fails at once.
 */
public interface RelockMultiLock extends Lock {

    /** The names, in the order they are acquired. */
    List<String> names();

    /** Acquires every lock, waiting as long as it takes; a handle releases them all. */
    MultiLockHandle acquire();

    /**
     * Acquires every lock within {@code wait} in all, or none, trying again through Redis being
     * unavailable until the wait ends (see the class comment).
     *
     * @return the handle, or empty if not every lock could be had in time
     * @throws RedisUnavailableException if the last try of the wait found Redis unavailable
     */
    Optional<MultiLockHandle> tryAcquire(Duration wait) throws InterruptedException;

    /** As {@link #tryAcquire(Duration)}, with an explicit lease on every lock that is not renewed. */
    Optional<MultiLockHandle> tryAcquire(Duration wait, Duration lease) throws InterruptedException;

    /** Not supported, as for every relock lock. */
    @Override
    default java.util.concurrent.locks.Condition newCondition() {
        throw new UnsupportedOperationException("relock locks do not support conditions");
    }
}
