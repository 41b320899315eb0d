package dev.relock.faults;

/**
 * What a history line records. Worker events carry the fencing token of the hold concerned; orchestrator events
 * name the affected worker, if any, in their detail.
 */
enum EventKind {
    /** A worker starts waiting for the lock. */
    REQUEST,
    /** lock() returned: the worker's critical section begins. */
    ACQUIRED,
    /** A fenced write of the register is sent. */
    WRITE_SENT,
    /** The register accepted the worker's preceding WRITE_SENT. */
    WRITE_OK,
    /** The register refused the worker's preceding WRITE_SENT: fencing caught a stale token. */
    WRITE_REFUSED,
    /** A fenced write of the SQL row is sent. */
    SQL_SENT,
    /** The table accepted the worker's preceding SQL_SENT. */
    SQL_OK,
    /** The table refused the worker's preceding SQL_SENT ({@code StaleFencingTokenException}). */
    SQL_REFUSED,
    /** One unfenced read-modify-write of the shared counter, written, inside a section; the detail is the value read. */
    COUNTER,
    /**
     * The worker is done with the resource and calls unlock(): its section ends here. The release reaches
     * Redis before unlock() returns, so the next holder may begin before RELEASED is logged.
     */
    RELEASING,
    /** unlock() returned normally: the section ends, if RELEASING did not end it. */
    RELEASED,
    /** unlock() threw because the lease had been lost: the section ends, if RELEASING did not end it. */
    RELEASE_LOST,
    /** The lease-lost listener told the worker this hold was lost; from any thread, even after the section ended. */
    LOST,
    /** An acquisition or a section failed; an open section ends here. Detail: what failed. */
    ERROR,
    /** The orchestrator starts injecting a fault. Detail: the fault's name. */
    FAULT_START,
    /** The orchestrator stops injecting a fault. Detail: the fault's name. */
    FAULT_END,
    /** The orchestrator kill -9'ed a worker: what it had open ends here. Detail: the worker's id. */
    KILLED,
    /** The unfenced counter read at the end of the run. Detail: its value. */
    COUNTER_FINAL
}
