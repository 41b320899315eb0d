package dev.relock;

import java.time.Duration;
import java.time.Instant;

/**
 * One hold that this client has now, as the client itself knows it (see
 * {@link RelockClient#heldLocks()}); no round trip to Redis stands behind it.
 *
 * @param name the lock's or semaphore's name
 * @param kind {@link LockKind#EXCLUSIVE} for an exclusive lock or the write half of a
 *     read-write lock, {@link LockKind#SHARED} for its read half, {@link LockKind#SEMAPHORE}
 *     for permits of a semaphore; a member of a multi-lock is {@link LockKind#EXCLUSIVE}; never
 *     {@link LockKind#FREE}
 * @param owner the owner id in Redis: {@code <client id>:<thread id>}, or {@code <client id>:h<n>}
 *     for a handle that any thread may close
 * @param fencingToken the fencing token this hold got at acquisition
 * @param heldSince when it was acquired, by this JVM's wall clock
 * @param remainingLease the lease left by this client's estimate, counted from when the request
 *     that last set the lease was sent, so never longer than Redis's; {@link Duration#ZERO} once
 *     it ran out
 * @param renewed whether the lease keeper renews it (false for an explicit lease)
 * @param thread the name of the thread that asked for it (for a handle: that started the acquisition), or
 *     {@code ""} when it has none (a virtual thread by default)
 */
public record HeldLock(
        String name, LockKind kind, String owner, long fencingToken, Instant heldSince,
        Duration remainingLease, boolean renewed, String thread) {

    /** A hold whose thread is not known. */
    public HeldLock(String name, LockKind kind, String owner, long fencingToken, Instant heldSince,
            Duration remainingLease, boolean renewed) {
        this(name, kind, owner, fencingToken, heldSince, remainingLease, renewed, "");
    }
}
