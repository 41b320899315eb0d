package dev.relock;

import java.time.Duration;
import java.util.Objects;

/**
 * Makes every fresh acquisition wait until enough replicas have the hold, so that a failover
 * (Sentinel or Cluster promoting a replica) right after the acquisition does not lose it.
 *
 * <p>After the acquire script took the lock, the client sends {@code WAIT replicas timeout} on the
 * same connection (on Redis Cluster: a connection to the master of the lock's slot), which counts
 * the replicas that acknowledged that write. If fewer than
 * {@code replicas} did within {@code timeout}, the hold is undone in Redis and
 * {@code onShortfall} decides what the caller sees. Re-entries of a lock the thread or handle
 * already holds are counted in the JVM and not guarded again.
 *
 * <p>The guard narrows the window in which a failover loses a fresh lock; it does not close it:
 * Redis replication stays asynchronous, a replica that acknowledged may still not be the one
 * promoted, and a hold keeps being renewed without a {@code WAIT}. See docs/sentinel-and-cluster.md.
 * Not available on Redlock, whose masters have no replicas.
 *
 * @param replicas how many replicas must acknowledge the acquisition; at least 1
 * @param timeout how long to wait for them; positive, at least 1 ms, and shorter than the
 *     client's command timeout (one {@code WAIT} is one command)
 * @param onShortfall what an acquisition that too few replicas acknowledged turns into
 * @param fsynced whether the acquisition must also be on disk: the guard then sends
 *     {@code WAITAOF 1 replicas timeout} instead of {@code WAIT}, and counts the replicas that wrote
 *     it to their append-only file and fsynced it, and only if the master fsynced it to its own too
 *     (a master that did not counts as no replica acknowledging). Needs Redis 7.2 or later, and
 *     {@code appendonly yes} on the master and the replicas; the client refuses to connect to a
 *     server without {@code WAITAOF}. Default false
 */
public record ReplicationGuard(int replicas, Duration timeout, OnShortfall onShortfall, boolean fsynced) {

    /** What happens when fewer replicas than required acknowledged an acquisition in time. */
    public enum OnShortfall {
        /**
         * Undo the hold and treat the attempt as "not acquired": a caller with wait time left
         * tries again (joining the back of the queue), otherwise {@code tryLock} returns false,
         * {@code tryAcquire} an empty result. {@code lock()} keeps trying.
         */
        RELEASE_AND_RETRY,
        /** Undo the hold and throw {@link ReplicationShortfallException} to the caller. */
        FAIL
    }

    /**
     * A guard that waits for replicas with {@code WAIT}, not for their disks.
     *
     * @throws IllegalArgumentException if {@code replicas} is below 1 or {@code timeout} is shorter than 1 ms
     */
    public ReplicationGuard(int replicas, Duration timeout, OnShortfall onShortfall) {
        this(replicas, timeout, onShortfall, false);
    }

    /**
     * @throws IllegalArgumentException if {@code replicas} is below 1 or {@code timeout} is shorter than 1 ms
     */
    public ReplicationGuard {
        if (replicas < 1) {
            throw new IllegalArgumentException("replicationGuard replicas must be at least 1: " + replicas);
        }
        Objects.requireNonNull(timeout, "replicationGuard timeout");
        // WAIT with 0 would block until the replicas acknowledge, however long that takes
        if (timeout.toMillis() < 1) {
            throw new IllegalArgumentException("replicationGuard timeout must be at least 1 ms: " + timeout);
        }
        Objects.requireNonNull(onShortfall, "replicationGuard onShortfall");
    }
}
