package dev.relock;

import java.time.Duration;
import java.util.List;

/**
 * The entry point: a connection to Redis that hands out distributed locks.
 *
 * <p>One client holds one multiplexed connection for commands, one for wake-up messages and one
 * lease-keeper thread that renews every lease it holds. Create one per application and share it;
 * it is safe for use by any number of threads. Closing it releases the locks it still holds.
 *
 * <pre>{@code
 * try (RelockClient client = RelockClient.create("redis://127.0.0.1:6379")) {
 *     Lock lock = client.lock("orders:42");
 *     ...
 * }
 * }</pre>
 */
public interface RelockClient extends AutoCloseable {

    /**
     * Connects to the Redis at {@code redisUri} with default settings.
     *
     * @param redisUri a Lettuce URI: {@code redis://[user:password@]host[:port][/database]} or
     *     {@code rediss://…} for TLS
     * @throws RelockException if Redis cannot be reached within the command timeout
     */
    static RelockClient create(String redisUri) {
        return builder().redisUri(redisUri).build();
    }

    /** Starts a builder for a client with a key prefix, lease, timeouts or an existing Lettuce client. */
    static RelockClientBuilder builder() {
        return new RelockClientBuilder();
    }

    /**
     * The reentrant exclusive lock with this name. Cheap: the returned object holds no state of its
     * own beyond the name, and any number of them may exist for one name.
     *
     * @param name any string of 1 to {@value RelockClientBuilder#MAX_NAME_LENGTH} characters that is
     *     not blank and is valid Unicode (no unpaired surrogate)
     * @throws NullPointerException if name is null
     * @throws IllegalArgumentException if name is blank, too long or not valid Unicode
     * @throws IllegalStateException if the client is closed
     */
    RelockLock lock(String name);

    /**
     * The exclusive lock with this name, {@link #lock(String)}'s, seen without re-entry: a thread that holds it does
     * not acquire it again through this view; {@code lock()} throws {@link IllegalStateException} naming the lock
     * instead of waiting for the thread itself forever, and {@code tryLock} returns false at once (see
     * {@link RelockLock}). It is the same lock in Redis, under the same keys: it excludes {@code lock(name)} and
     * {@code readWriteLock(name)} holders of every client, and a thread's hold is one hold in this client whichever
     * view took it, so a thread that holds {@code lock(name)} is refused here, while {@code lock(name)} re-enters a
     * hold taken here. Cheap, like {@link #lock(String)}.
     *
     * @throws NullPointerException if name is null
     * @throws IllegalArgumentException if name is blank, too long or not valid Unicode
     * @throws IllegalStateException if the client is closed
     */
    RelockLock nonReentrantLock(String name);

    /**
     * The read-write lock with this name; its write half is {@link #lock(String)} of the same name.
     *
     * @throws NullPointerException if name is null
     * @throws IllegalArgumentException if name is blank, too long or not valid Unicode
     * @throws IllegalStateException if the client is closed
     */
    RelockReadWriteLock readWriteLock(String name);

    /**
     * The semaphore with this name (set its number of permits once with
     * {@link RelockSemaphore#trySetPermits}).
     *
     * @throws NullPointerException if name is null
     * @throws IllegalArgumentException if name is blank, too long or not valid Unicode
     * @throws IllegalStateException if the client is closed
     * @throws UnsupportedOperationException on a Redlock client: a majority vote bounds holders for one permit
     *     only (with 5 nodes and 2 permits, 3 holders can each hold permits on a majority of 3 nodes)
     */
    RelockSemaphore semaphore(String name);

    /**
     * The count-down latch with this name (arm it with {@link RelockCountDownLatch#trySetCount}). Cheap, like
     * {@link #lock(String)}. A latch, a lock and a semaphore may share a name; they are different things.
     *
     * @throws NullPointerException if name is null
     * @throws IllegalArgumentException if name is blank, too long or not valid Unicode
     * @throws IllegalStateException if the client is closed
     * @throws UnsupportedOperationException on a Redlock client (see {@link RelockCountDownLatch})
     */
    RelockCountDownLatch countDownLatch(String name);

    /**
     * The exclusive locks of these names, taken all or none.
     *
     * @throws NullPointerException if names or one of them is null
     * @throws IllegalArgumentException if there are no names, a name is repeated, blank, too long or not valid
     *     Unicode
     * @throws IllegalStateException if the client is closed
     */
    RelockMultiLock multiLock(String... names);

    /**
     * What Redis holds for the lock with this name now, whether held or free, its holders named
     * ({@link LockInfo#identities()}). One round trip, and one more per holding client, for its identity record.
     *
     * @throws NullPointerException if name is null
     * @throws IllegalArgumentException if name is blank, too long or not valid Unicode
     */
    LockInfo inspect(String name);

    /**
     * What Redis holds for the semaphore with this name now: its permits and live holders, named as by
     * {@link #inspect}.
     *
     * @throws NullPointerException if name is null
     * @throws IllegalArgumentException if name is blank, too long or not valid Unicode
     * @throws UnsupportedOperationException on a Redlock client, which has no semaphores
     */
    LockInfo inspectSemaphore(String name);

    /**
     * The locks that are held now, and the semaphores that exist, whose names match
     * {@code nameGlob} (Redis glob syntax: {@code *}, {@code ?}, {@code [abc]}; {@code "*"} for
     * all), sorted by name (a lock before a semaphore of the same name). Walks the keyspace with SCAN,
     * never KEYS, so it does not block Redis, and like SCAN it may miss a lock taken during the walk.
     * The holders are named as by {@link #inspect} (one identity record read per holding client).
     */
    List<LockInfo> list(String nameGlob);

    /**
     * The holds this client has now (locks of every kind, permits), sorted by name: what the client
     * itself knows, without a round trip to Redis. A hold whose lease was lost is not listed, even
     * before its owner unlocks it. For an operator's view or an actuator endpoint.
     */
    List<HeldLock> heldLocks();

    /**
     * Sends a PING on the command connection and returns the round trip, for health checks.
     *
     * @throws RedisUnavailableException naming the Redis address if no reply came within the
     *     command timeout or the connection is down
     * @throws RelockException if Redis refused the command
     * @throws IllegalStateException if the client is closed
     */
    Duration ping();

    /** The random 128-bit id (32 hex digits) that makes this client's owner ids unique. */
    String clientId();

    /**
     * Who this client is for operators: its id, host, process, application name and label; its Redis connections
     * carry {@link ClientIdentity#connectionName()}, unless it runs on a Lettuce client you passed.
     */
    ClientIdentity identity();

    /** The configuration this client runs with. */
    RelockSettings settings();

    /**
     * Stops the lease keeper, wakes every waiting thread (they fail with IllegalStateException),
     * releases the locks this client still holds, and closes its connections. A Lettuce client
     * passed to the builder is left open. Idempotent.
     */
    @Override
    void close();
}
