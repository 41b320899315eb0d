package dev.relock.integration;

import dev.relock.RelockException;
import dev.relock.RelockLock;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.springframework.integration.support.locks.DistributedLock;

/**
 * One relock lock seen as Spring Integration's {@link DistributedLock} (7.0 and later): the
 * {@link java.util.concurrent.locks.Lock} methods are {@link RegistryLock}'s, shared with the 6.x
 * adapter; this class adds the two time-to-live methods, whose lease is not renewed. Stateless
 * beyond the lock, so any thread may use it.
 */
final class RelockDistributedLock extends RegistryLock implements DistributedLock {

    RelockDistributedLock(RelockLock lock) {
        super(lock);
    }

    @Override
    public void lock(Duration ttl) {
        lock.lock(millis(ttl, "ttl"), TimeUnit.MILLISECONDS);
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

    private static long millis(Duration duration, String what) {
        return Objects.requireNonNull(duration, what).toMillis();
    }
}
