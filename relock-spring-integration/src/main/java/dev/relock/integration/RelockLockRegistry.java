package dev.relock.integration;

import dev.relock.LockInfo;
import dev.relock.RelockClient;
import java.time.Duration;
import java.util.Objects;
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
 * {@link DistributedLock#tryLock(Duration, Duration)}) keeps exactly that lease, not renewed.
 *
 * <p>Exceptions are those users of {@code RedisLockRegistry} handle: {@code unlock()} by a thread
 * that does not hold the lock throws {@link IllegalStateException}, {@code unlock()} of a hold
 * whose lease ran out throws {@link java.util.ConcurrentModificationException}, and a
 * {@code tryLock} that cannot reach Redis throws
 * {@link org.springframework.dao.CannotAcquireLockException}; each has relock's exception as its
 * cause. {@code lock()} and {@code lockInterruptibly()} keep trying through Redis trouble.
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
     * Checks that this registry's client holds the lock for {@code lockKey} in Redis (one round
     * trip). The lease needs no renewal call: the client's lease keeper renews it while it is held.
     *
     * @throws IllegalStateException if the lock is not held by this registry's client
     */
    @Override
    public void renewLock(Object lockKey) {
        String name = lockName(lockKey);
        LockInfo info = client.inspect(name);
        String ownerPrefix = client.clientId() + ":";
        boolean heldByThisClient =
                info.holders().keySet().stream().anyMatch(owner -> owner.startsWith(ownerPrefix));
        if (!heldByThisClient) {
            throw new IllegalStateException("Could not renew lock '" + name
                    + "': it is not held by relock client " + client.clientId());
        }
    }

    /**
     * As {@link #renewLock(Object)}; {@code ttl} is not applied. A lease the lease keeper renews
     * needs none, and a lock taken with an explicit time-to-live keeps the one it was taken with.
     *
     * @throws NullPointerException if ttl is null
     * @throws IllegalArgumentException if ttl is not positive
     * @throws IllegalStateException if the lock is not held by this registry's client
     */
    @Override
    public void renewLock(Object lockKey, Duration ttl) {
        Objects.requireNonNull(ttl, "ttl");
        if (ttl.isNegative() || ttl.isZero()) {
            throw new IllegalArgumentException("ttl must be positive, was " + ttl);
        }
        renewLock(lockKey);
    }

    @Override
    public String toString() {
        return "RelockLockRegistry{registryKey=" + registryKey + ", client=" + client.clientId() + "}";
    }
}
