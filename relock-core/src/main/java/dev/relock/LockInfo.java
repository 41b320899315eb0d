package dev.relock;

import java.time.Duration;
import java.util.Map;

/**
 * What Redis holds for one lock at one moment, for operators' tools.
 *
 * <p>Semaphores are described the same way, with kind {@link LockKind#SEMAPHORE}, their holders'
 * permits as hold counts and their number of permits in {@code permits}.
 *
 * @param name the lock's name
 * @param kind {@link LockKind#EXCLUSIVE} when a writer (or the exclusive lock's holder) holds it,
 *     {@link LockKind#SHARED} when readers hold it, {@link LockKind#FREE} when nobody does,
 *     {@link LockKind#SEMAPHORE} for a semaphore
 * @param holders owner id ({@code <client id>:<thread id>}, or {@code <client id>:h<n>} for a
 *     handle) -> hold count: the one writer, or every reader, or a semaphore's permit holders
 *     with their permits; empty when free. A writer that downgraded is listed as the writer.
 * @param fencingToken the writer's fencing token, or the highest reader's; 0 when free and for
 *     semaphores
 * @param remainingLease the longest lease left among the holders; {@link Duration#ZERO} when free,
 *     and {@code ChronoUnit.FOREVER.getDuration()} for a key without expiry (not made by relock)
 * @param waiters how many live waiters are queued for it in Redis (threads of a client that wait behind another thread
 *     of the same client, which holds the lock, wait in that client and are not counted here; its
 *     {@code relock.waiting} gauge counts them)
 * @param permits a semaphore's number of permits (-1 when not set); 0 for locks
 * @param identities owner id -> who is behind it (host, process, application, thread), for every holder, as the
 *     holding clients registered themselves (see {@link HolderIdentity}); empty where not looked up
 */
public record LockInfo(
        String name, LockKind kind, Map<String, Integer> holders, long fencingToken,
        Duration remainingLease, int waiters, int permits, Map<String, HolderIdentity> identities) {

    public LockInfo {
        holders = Map.copyOf(holders);
        identities = Map.copyOf(identities);
    }

    /** What Redis holds for a lock, its holders not named. */
    public LockInfo(String name, LockKind kind, Map<String, Integer> holders, long fencingToken,
            Duration remainingLease, int waiters, int permits) {
        this(name, kind, holders, fencingToken, remainingLease, waiters, permits, Map.of());
    }

    /** Whether anyone holds the lock. */
    public boolean isHeld() {
        return !holders.isEmpty();
    }
}
