package dev.relock.integration;

import dev.relock.LeaseLostException;
import dev.relock.RelockException;
import dev.relock.RelockLock;
import java.util.ConcurrentModificationException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;
import org.springframework.dao.CannotAcquireLockException;

/**
 * One relock lock seen as the {@link Lock} of a Spring Integration lock registry: every call goes
 * to the relock lock; only exceptions are translated to the ones {@code RedisLockRegistry} throws,
 * with relock's as the cause. Stateless beyond the lock, so any thread may use it.
 *
 * <p>The same on every Spring Integration line (this source is compiled into each adapter jar):
 * the 6.x registry hands it out as it is; the 7.x registry hands out its subclass
 * {@code RelockDistributedLock}, which adds the time-to-live methods of 7.0's
 * {@code DistributedLock}.
 */
class RegistryLock implements Lock {

    final RelockLock lock;

    RegistryLock(RelockLock lock) {
        this.lock = lock;
    }

    @Override
    public final void lock() {
        lock.lock();
    }

    @Override
    public final void lockInterruptibly() throws InterruptedException {
        lock.lockInterruptibly();
    }

    @Override
    public final boolean tryLock() {
        try {
            return lock.tryLock();
        } catch (RelockException e) {
            throw cannotAcquire(e);
        }
    }

    @Override
    public final boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        try {
            return lock.tryLock(time, unit);
        } catch (RelockException e) {
            throw cannotAcquire(e);
        }
    }

    @Override
    public final void unlock() {
        try {
            lock.unlock();
        } catch (LeaseLostException e) {
            // caught before its supertype IllegalMonitorStateException: the thread did hold it
            throw new ConcurrentModificationException("The lease of lock '" + lock.name()
                    + "' ran out before unlock; the data it protects may have been changed by"
                    + " another holder", e);
        } catch (IllegalMonitorStateException e) {
            throw new IllegalStateException("You do not own lock '" + lock.name() + "'", e);
        }
    }

    @Override
    public final Condition newCondition() {
        return lock.newCondition();
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "{" + lock.name() + "}";
    }

    final CannotAcquireLockException cannotAcquire(RelockException e) {
        return new CannotAcquireLockException("Failed to lock '" + lock.name() + "'", e);
    }
}
