package dev.relock;

import io.micrometer.observation.Observation;

/**
 * What relock tells an {@code ObservationRegistry} about one wait ({@value #WAIT}) or one hold
 * ({@value #HOLD}). Only used when the client was built with
 * {@link RelockClientBuilder#observationRegistry}; needs micrometer-observation on the class path.
 *
 * <p>To change the names or key values, register a
 * {@code GlobalObservationConvention<RelockObservationContext>} on the registry; relock's own
 * convention applies when none supports the context. Its keys: low cardinality {@code kind},
 * {@code group}, {@code outcome}; high cardinality {@code lock.name} and, once known,
 * {@code fencing.token}.
 */
public final class RelockObservationContext extends Observation.Context {

    /** The name of the observation around one acquisition, from its first attempt to its outcome. */
    public static final String WAIT = "relock.wait";
    /** The name of the observation of one hold, from acquisition to release or loss. */
    public static final String HOLD = "relock.hold";

    private final String lockName;
    private final String kind;
    private final String group;
    private volatile String outcome = "unknown";
    private volatile long fencingToken;

    /**
     * @param lockName the lock's name (the names joined by commas for a multi-lock)
     * @param kind {@code exclusive}, {@code shared}, {@code semaphore} or {@code multi}
     * @param group the lock's metrics group (see {@link RelockClientBuilder#metricsGroup})
     */
    public RelockObservationContext(String lockName, String kind, String group) {
        this.lockName = lockName;
        this.kind = kind;
        this.group = group;
    }

    /** The lock's name; the names joined by commas for a multi-lock. */
    public String lockName() {
        return lockName;
    }

    /** {@code exclusive}, {@code shared}, {@code semaphore} or {@code multi}. */
    public String kind() {
        return kind;
    }

    /** The lock's metrics group. */
    public String group() {
        return group;
    }

    /**
     * How it ended: {@code acquired}, {@code timed_out} or {@code failed} for a wait ({@code skipped} for a
     * wait of a Spring {@code @DistributedLock(whenNotAcquired = SKIP)} method that ended without the lock),
     * {@code released} or {@code lost} for a hold; {@code unknown} while it goes on.
     */
    public String outcome() {
        return outcome;
    }

    /** The hold's fencing token; 0 while unknown and for a multi-lock's wait. */
    public long fencingToken() {
        return fencingToken;
    }

    /** Sets the outcome; relock calls this just before it stops the observation. */
    public void outcome(String outcome) {
        this.outcome = outcome;
    }

    /** Sets the fencing token once it is known. */
    public void fencingToken(long fencingToken) {
        this.fencingToken = fencingToken;
    }
}
