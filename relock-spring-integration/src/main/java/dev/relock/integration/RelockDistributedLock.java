package dev.relock.integration;

import dev.relock.LeaseLostException;
import dev.relock.RelockException;
import dev.relock.RelockLock;
import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import org.springframework.dao.CannotAcquireLockException;
import org.springframework.integration.support.locks.DistributedLock;

/**
 * One relock lock seen as Spring Integration's {@link DistributedLock}: every call goes to the
 * relock lock; only exceptions are translated to the ones {@code RedisLockRegistry} throws, with
 * relock's as the cause. Stateless beyond the lock, so any thread may use it.
 */
final class RelockDistributedLock implements DistributedLock {

    private final RelockLock lock;

    RelockDistributedLock(RelockLock lock) {
        this.lock = lock;
    }

    @Override
    public void lock() {
        lock.lock();
    }

    @Override
    public void lock(Duration ttl) {
        lock.lock(millis(ttl, "ttl"), TimeUnit.MILLISECONDS);
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        lock.lockInterruptibly();
    }

    @Override
    public boolean tryLock() {
        try {
            return lock.tryLock();
        } catch (RelockException e) {
            throw cannotAcquire(e);
        }
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        try {
            return lock.tryLock(time, unit);
        } catch (RelockException e) {
            throw cannotAcquire(e);
        }
    }

    @Override
    public boolean tryLock(Duration waitTime, Duration ttl) throws InterruptedException {
        long wait = millis(waitTime, "waitTime");
        long lease = millis(ttl, "ttl");
        try {
            return lock.tryLock(wait, lease, TimeUnit.MILLISECONDS);
        } catch (RelockException e) {
            throw cannotAcquire(e);
        }
    }

    @Override
    public void unlock() {
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
    public Condition newCondition() {
        return lock.newCondition();
    }

    @Override
    public String toString() {
        return "RelockDistributedLock{" + lock.name() + "}";
    }

    private CannotAcquireLockException cannotAcquire(RelockException e) {
        return new CannotAcquireLockException("Failed to lock '" + lock.name() + "'", e);
    }

    private static long millis(Duration duration, String what) {
        return Objects.requireNonNull(duration, what).toMillis();
    }
}
