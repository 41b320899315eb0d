package dev.relock.integration;

import dev.relock.LeaseLostException;
import dev.relock.RelockClient;
import dev.relock.RelockException;
import dev.relock.RelockLock;
import java.time.Duration;
import java.util.Objects;
import org.springframework.dao.DataAccessResourceFailureException;

/**
 * Everything of {@code RelockLockRegistry} that is the same on every Spring Integration line: the
 * naming of locks, the lease renewal and its exceptions, and the client it owns when made from a connection factory. This source is compiled into each adapter
 * jar (relock-spring-integration for 7.x, relock-spring-integration-6 for 6.x), beside that jar's
 * own {@code RelockLockRegistry}, which adds only what differs between the lines: the registry
 * interfaces it implements and the type of lock {@code obtain} returns.
 *
 * <p>Package-private, as {@code AbstractStringBuilder} is to {@code StringBuilder}: its public
 * methods are the registry's, and implement the registry interfaces that declare them. It names
 * no Spring Integration type, so it loads on every line.
 *
 * <p>It holds no state besides its client, registry key and whether it owns the client, all fixed at
 * construction, so any thread may use it. It owns the client only when {@code RelockLockRegistries} made it from
 * a Spring Data Redis connection factory. Neither it nor its subclasses name a Spring Data Redis type: Spring
 * introspects every method of a bean's class, and Spring Data Redis is optional.
 */
abstract class AbstractRelockLockRegistry implements AutoCloseable {

    private final RelockClient client;
    private final String registryKey;
    /** Whether {@link #close()} closes the client: true only for a client this registry made. */
    private final boolean ownsClient;

    AbstractRelockLockRegistry(RelockClient client, String registryKey, boolean ownsClient) {
        this.client = Objects.requireNonNull(client, "client");
        this.registryKey = checkedRegistryKey(registryKey);
        this.ownsClient = ownsClient;
    }

    /** {@code registryKey}, if it is one. */
    static String checkedRegistryKey(String registryKey) {
        Objects.requireNonNull(registryKey, "registryKey");
        if (registryKey.isBlank()) {
            throw new IllegalArgumentException("registryKey must not be blank");
        }
        return registryKey;
    }

    /** The relock lock that {@code obtain(lockKey)} wraps: a fresh, cheap object each time. */
    final RelockLock relockLock(Object lockKey) {
        return client.lock(lockName(lockKey));
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
    public void expireUnusedOlderThan(long age) {
        // intentionally empty: obtain() creates a stateless lock object each time
    }

    /**
     * As {@link #renewLock(Object, Duration)} with the client's default lease, which plays the part
     * of {@code RedisLockRegistry}'s {@code expireAfter}.
     */
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

    /**
     * Closes the client if the registry owns it (made by {@code RelockLockRegistries}): its locks still held are
     * released and its connections closed, and the registry's locks then throw {@link IllegalStateException}. A
     * client given to the constructor is left open, for its owner to close. Idempotent.
     */
    @Override
    public void close() {
        if (ownsClient) {
            client.close();
        }
    }

    @Override
    public String toString() {
        // the client's own text, not clientId(): that connects a client that has not connected yet (the starter's)
        return getClass().getSimpleName() + "{registryKey=" + registryKey + ", client=" + client + "}";
    }
}
