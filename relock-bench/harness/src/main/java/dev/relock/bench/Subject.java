package dev.relock.bench;

import java.time.Duration;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReadWriteLock;

/**
 * One lock implementation under test, as a user of it would configure it. Every subject hands out
 * plain {@link Lock}s, so the scenarios drive relock, Redisson (from another class loader),
 * Spring Integration and the floor through the very same code.
 */
interface Subject {

    /** The row label in the report, e.g. {@code "Redisson 3.52.0 RLock"}. */
    String label();

    /** Who makes it: {@code relock}, {@code redisson3}, {@code redisson4}, {@code spring}, {@code floor}, {@code diagnostic}. */
    String family();

    /** Whether its {@code lock()} waits for a held lock by itself (not a polling loop of ours); needed for S3. */
    boolean waits();

    /** Whether it keeps leases alive while a lock is held (a watchdog); needed for S4. */
    boolean renews();

    /** The label of its read-write lock in S5, or null if it has none. */
    default String readWriteLabel() {
        return null;
    }

    /**
     * Opens one client, as one application process would.
     *
     * @param redisUri the private server
     * @param lease the lease that the watchdog keeps renewing, or null for the library's default
     */
    Client connect(String redisUri, Duration lease) throws Exception;

    /** One connected client of a subject. */
    interface Client extends AutoCloseable {

        /** The lock with this name; the calling thread both locks and unlocks it. */
        Lock lock(String name);

        /** The read-write lock with this name (S5), if {@link Subject#readWriteLabel()} is not null. */
        default ReadWriteLock readWriteLock(String name) {
            throw new UnsupportedOperationException("no read-write lock");
        }

        /** Leases this client reported lost, or -1 when the library cannot tell. */
        default long lostLeases() {
            return -1;
        }

        @Override
        void close();
    }
}
