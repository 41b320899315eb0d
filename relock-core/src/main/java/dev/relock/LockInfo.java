package dev.relock;

import java.time.Duration;
import java.util.Map;

/**
 * What Redis holds for one lock at one moment, for operators' tools.
 *
 * @param name the lock's name
 * @param kind {@value #EXCLUSIVE} when a writer (or the exclusive lock's holder) holds it,
 *     {@value #SHARED} when readers hold it, {@value #FREE} when nobody does
 * @param holders owner id ({@code <client id>:<thread id>}) -> hold count: the one writer, or
 *     every reader; empty when free. A writer that downgraded is listed as the writer.
 * @param fencingToken the writer's fencing token, or the highest reader's; 0 when free
 * @param remainingLease the longest lease left among the holders; {@link Duration#ZERO} when free,
 *     and {@code ChronoUnit.FOREVER.getDuration()} for a key without expiry (not made by relock)
 * @param waiters how many live waiters are queued for it
 */
public record LockInfo(
        String name, String kind, Map<String, Integer> holders, long fencingToken,
        Duration remainingLease, int waiters) {

    public static final String EXCLUSIVE = "exclusive";
    public static final String SHARED = "shared";
    public static final String FREE = "free";

    public LockInfo {
        holders = Map.copyOf(holders);
    }

    /** Whether anyone holds the lock. */
    public boolean isHeld() {
        return !holders.isEmpty();
    }
}
