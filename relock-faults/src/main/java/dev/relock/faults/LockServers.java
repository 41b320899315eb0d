package dev.relock.faults;

/**
 * The lock servers of one scenario and how its workers reach them: started before the workers, closed after them,
 * used by the campaign's thread only. Subclasses add the faults their topology can suffer, as methods a
 * {@link Scenario} names.
 */
abstract class LockServers implements AutoCloseable {

    /**
     * How worker {@code workerId} reaches the lock, as {@link FaultWorker} reads it: a {@code redis://} or
     * {@code redis-sentinel://} URI, {@code caller:} and a URI (relock over a Lettuce client made by the caller, on
     * default options), {@code cluster:} or {@code redlock:} followed by comma-separated URIs.
     * Called once per worker started (a worker restarted after a kill has a new id).
     */
    abstract String lockSpec(String workerId);

    /**
     * How the campaign's own client (the latch workload's {@link LatchCoordinator}) reaches the lock: as the workers
     * do, but never through a proxy that a fault aims at a worker.
     */
    String coordinatorSpec() {
        return lockSpec("coordinator");
    }

    /** The replication guard the workers use, as {@code replicas:timeoutMillis}, or "" for none. */
    String guard() {
        return "";
    }

    /** What the report says of these servers, e.g. "one Redis, each worker through its own TCP proxy". */
    abstract String describe();

    @Override
    public abstract void close();
}
