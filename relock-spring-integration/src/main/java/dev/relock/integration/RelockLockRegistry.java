package dev.relock.integration;

import dev.relock.LeaseLostException;
import dev.relock.RelockClient;
import dev.relock.RelockException;
import java.time.Duration;
import java.util.Objects;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.integration.support.locks.DistributedLock;
import org.springframework.integration.support.locks.ExpirableLockRegistry;
import org.springframework.integration.support.locks.RenewableLockRegistry;

/**
 * A Spring Integration lock registry whose locks are relock locks: a drop-in for
 * {@code RedisLockRegistry}.
 *
 * <pre>{@code
 * @Bean
 * RelockLockRegistry lockRegistry(RelockClient relock) {
 *     return new RelockLockRegistry(relock, "my-app");
 * }
 * }</pre>
 *
 * <p>The key {@code K} names the relock lock {@code registryKey + ":" + K}, as
 * {@code RedisLockRegistry} names its Redis key; two registries with the same registry key, in
 * any number of processes, share their locks. What the locks promise is what {@code RelockLock}
 * promises: reentrant per thread, fair, a lease renewed by the client's lease keeper while held
 * (so no renewal scheduler and no {@link #renewLock} calls are needed), fencing tokens. A lock
 * taken with an explicit time-to-live ({@link DistributedLock#lock(Duration)},
 * {@link DistributedLock#tryLock(Duration, Duration)}) keeps that lease, not renewed, unless the
 * holding thread extends it with {@link #renewLock}.
 *
 * <p>Exceptions are those users of {@code RedisLockRegistry} handle: {@code unlock()} by a thread
 * that does not hold the lock throws {@link IllegalStateException}, {@code unlock()} of a hold
 * whose lease ran out throws {@link java.util.ConcurrentModificationException}, a
 * {@code tryLock} that cannot reach Redis throws
 * {@link org.springframework.dao.CannotAcquireLockException}, and {@link #renewLock} of a lock the
 * current thread does not hold (or whose lease was lost) throws {@link IllegalStateException}; each
 * has relock's exception as its cause. {@code lock()} and {@code lockInterruptibly()} keep trying through Redis trouble.
 *
 * <p>The registry holds no state besides its client and registry key: {@link #obtain} returns a
 * fresh, cheap lock object each time, so there is no cache to bound or to expire. It does not own
 * the client; close the client when the application stops.
 */
public final class RelockLockRegistry
        implements ExpirableLockRegistry<DistributedLock>, RenewableLockRegistry<DistributedLock> {

    private final RelockClient client;
    private final String registryKey;

    /**
     * A registry whose locks are named {@code registryKey + ":" + key} in {@code client}.
     *
     * @throws NullPointerException if client or registryKey is null
     * @throws IllegalArgumentException if registryKey is blank
     */
    public RelockLockRegistry(RelockClient client, String registryKey) {
        this.client = Objects.requireNonNull(client, "client");
        Objects.requireNonNull(registryKey, "registryKey");
        if (registryKey.isBlank()) {
            throw new IllegalArgumentException("registryKey must not be blank");
        }
        this.registryKey = registryKey;
    }

    /**
     * The lock for {@code lockKey}.
     *
     * @param lockKey a String, as for {@code RedisLockRegistry}
     * @throws IllegalArgumentException if lockKey is not a String, or makes a lock name that is
     *     too long for the client
     */
    @Override
    public DistributedLock obtain(Object lockKey) {
        return new RelockDistributedLock(client.lock(lockName(lockKey)));
    }

    /**
     * The relock lock name for {@code lockKey}: hand it to {@link RelockClient#lock(String)} to read
     * a holder's fencing token or remaining lease.
     *
     * @throws NullPointerException if lockKey is null
     * @throws IllegalArgumentException if lockKey is not a String
     */
    public String lockName(Object lockKey) {
        Objects.requireNonNull(lockKey, "lockKey");
        if (!(lockKey instanceof String key)) {
            throw new IllegalArgumentException("lockKey must be a String, not a "
                    + lockKey.getClass().getName() + " (" + lockKey + ")");
        }
        return registryKey + ":" + key;
    }

    /** Does nothing: the registry caches no lock objects, so there are none to expire. */
    @Override
    public void expireUnusedOlderThan(long age) {
        // intentionally empty: obtain() creates a stateless lock object each time
    }

    /**
     * As {@link #renewLock(Object, Duration)} with the client's default lease, which plays the part
     * of {@code RedisLockRegistry}'s {@code expireAfter}.
     */
    @Override
    public void renewLock(Object lockKey) {
        renewLock(lockKey, client.settings().defaultLease());
    }

    /**
     * Extends the lease of the current thread's hold of the lock for {@code lockKey}
     * ({@code RelockLock.extendLease}, one round trip): Redis keeps it at least {@code ttl} from
     * now, and never less than before. A lock taken with an explicit time-to-live then ends
     * {@code ttl} from now (or later, if more was left); a lock the lease keeper renews goes on
     * being renewed, each renewal for at least {@code ttl}.
     *
     * @throws NullPointerException if ttl is null
     * @throws IllegalArgumentException if ttl is not positive
     * @throws IllegalStateException if the current thread does not hold the lock, or its lease was
     *     lost (the lease-lost listener has been told; {@code unlock()} then throws
     *     {@link java.util.ConcurrentModificationException}), with relock's exception as the cause
     * @throws DataAccessResourceFailureException if Redis did not answer within the client's command
     *     timeout; the lease is unchanged
     */
    @Override
    public void renewLock(Object lockKey, Duration ttl) {
        Objects.requireNonNull(ttl, "ttl");
        if (ttl.isNegative() || ttl.isZero()) {
            throw new IllegalArgumentException("ttl must be positive, was " + ttl);
        }
        String name = lockName(lockKey);
        try {
            client.lock(name).extendLease(ttl);
        } catch (LeaseLostException e) {
            // caught before its supertype IllegalMonitorStateException: the thread did hold it
            throw new IllegalStateException("Could not renew lock '" + name + "': its lease was lost", e);
        } catch (IllegalMonitorStateException e) {
            throw new IllegalStateException("Could not renew lock '" + name
                    + "': it is not held by the current thread", e);
        } catch (RelockException e) {
            throw new DataAccessResourceFailureException("Could not renew lock '" + name + "'", e);
        }
    }

    @Override
    public String toString() {
        return "RelockLockRegistry{registryKey=" + registryKey + ", client=" + client.clientId() + "}";
    }
}
