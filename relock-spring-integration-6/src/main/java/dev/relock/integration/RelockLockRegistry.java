package dev.relock.integration;

import dev.relock.RelockClient;
import java.util.concurrent.locks.Lock;
import org.springframework.integration.support.locks.ExpirableLockRegistry;
import org.springframework.integration.support.locks.RenewableLockRegistry;

/**
 * A Spring Integration lock registry whose locks are relock locks: a drop-in for
 * {@code RedisLockRegistry}. This is the one for Spring Integration 6.x (Spring Boot 3.5), built
 * and tested with 6.5; on 7.x (Spring Boot 4) use the class of the same name in
 * relock-spring-integration, whose {@link #obtain} returns a {@code DistributedLock}.
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
 * (so no renewal scheduler and no {@link #renewLock} calls are needed), fencing tokens. 6.x's
 * {@link Lock} has no way to ask for a time-to-live; to take a lock whose lease is not renewed,
 * take it through relock, {@code client.lock(registry.lockName(key)).lock(ttl, unit)}: the
 * registry's lock for that key then is that hold (for {@code unlock()} and {@link #renewLock}).
 *
 * <p>Exceptions are those users of {@code RedisLockRegistry} handle: {@code unlock()} by a thread
 * that does not hold the lock throws {@link IllegalStateException}, {@code unlock()} of a hold
 * whose lease ran out throws {@link java.util.ConcurrentModificationException}, a
 * {@code tryLock} that cannot reach Redis throws
 * {@link org.springframework.dao.CannotAcquireLockException}, and {@link #renewLock} of a lock the
 * current thread does not hold (or whose lease was lost) throws {@link IllegalStateException}; each
 * has relock's exception as its cause. {@code lock()} and {@code lockInterruptibly()} keep trying through Redis trouble.
 *
 * <p>Coming from {@code RedisLockRegistry}, one line changes:
 * {@code new RedisLockRegistry(connectionFactory, key)} becomes
 * {@link RelockLockRegistries#fromConnectionFactory RelockLockRegistries.fromConnectionFactory(connectionFactory, key)},
 * a registry with a client of its own that connects where the Lettuce connection factory does.
 *
 * <p>The registry holds no state besides its client and registry key: {@link #obtain} returns a
 * fresh, cheap lock object each time, so there is no cache to bound or to expire. It owns its client
 * only when {@link RelockLockRegistries} made it, and then {@link #close()} closes it (a
 * {@code @Bean} registry is closed with its context); a client given to the constructor is left
 * open, for the application to close when it stops.
 */
public final class RelockLockRegistry extends AbstractRelockLockRegistry
        implements ExpirableLockRegistry, RenewableLockRegistry {

    /**
     * A registry whose locks are named {@code registryKey + ":" + key} in {@code client}.
     *
     * @throws NullPointerException if client or registryKey is null
     * @throws IllegalArgumentException if registryKey is blank
     */
    public RelockLockRegistry(RelockClient client, String registryKey) {
        this(client, registryKey, false);
    }

    /** A registry that closes {@code client} at {@link #close()} if it owns it. */
    RelockLockRegistry(RelockClient client, String registryKey, boolean ownsClient) {
        super(client, registryKey, ownsClient);
    }

    /**
     * The lock for {@code lockKey}.
     *
     * @param lockKey a String, as for {@code RedisLockRegistry}
     * @throws IllegalArgumentException if lockKey is not a String, or makes a lock name that is
     *     too long for the client
     */
    @Override
    public Lock obtain(Object lockKey) {
        return new RegistryLock(relockLock(lockKey));
    }
}
