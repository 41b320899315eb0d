package dev.relock.faults;

/**
 * What a history line records. Worker events carry the fencing token of the hold concerned; orchestrator events
 * name the affected worker, if any, in their detail.
 */
enum EventKind {
    /** A worker is connected (its client, the resource Redis, the SQL table) and begins; its seconds count from here. */
    STARTED,
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
    /** A producer pushed an item onto the condition workload's queue, inside its section. Detail: the item. */
    PRODUCED,
    /** A producer's signal() after its PRODUCED returned. Detail: the item. */
    SIGNALLED,
    /** A consumer read the queue's head, inside its section, and is about to remove it. Detail: the item. */
    CONSUMING,
    /** The consumer removed the item of its CONSUMING. Detail: the item. */
    CONSUMED,
    /** A consumer found the queue empty and calls await(): its section ends here. Detail: the await's timeout in ms. */
    AWAIT_START,
    /** await() returned, the lock held again (an ACQUIRED with its new token follows). Detail: signalled, timed out. */
    AWAIT_END,
    /** The campaign found the item in the queue at the end of the run. Detail: the item. */
    DRAINED,
    /** The latch coordinator armed the latch of a round. Token: the round; detail: the count. */
    ROUND_SET,
    /** A worker calls countDown() on a round's latch. Token: the round. */
    COUNT_SENT,
    /** countDown() returned. Token: the round; detail: the count it left. */
    COUNTED,
    /** A worker calls await() on a round's latch. Token: the round; detail: the await's timeout in ms. */
    LATCH_WAIT,
    /** The await of the worker's LATCH_WAIT returned true: the latch was open. Token: the round. */
    LATCH_OPEN,
    /** The await of the worker's LATCH_WAIT returned false: its time was up. Token: the round. */
    LATCH_TIMEOUT,
    /** The orchestrator starts injecting a fault. Detail: the fault's name. */
    FAULT_START,
    /** The orchestrator stops injecting a fault. Detail: the fault's name. */
    FAULT_END,
    /** The orchestrator kill -9'ed a worker: what it had open ends here. Detail: the worker's id. */
    KILLED,
    /** The unfenced counter read at the end of the run. Detail: its value. */
    COUNTER_FINAL
}
