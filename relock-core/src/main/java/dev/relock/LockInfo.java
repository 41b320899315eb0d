package dev.relock;

import java.time.Duration;
import java.util.Map;

/**
 * What Redis holds for one lock at one moment, for operators' tools.
 *
 * @param name the lock's name
 * @param kind what sort of lock it is: {@code "lock"} for the exclusive lock
 * @param holders owner id ({@code <client id>:<thread id>}) -> hold count; empty when free
 * @param fencingToken the current holder's fencing token; 0 when free
 * @param remainingLease the lease left; {@link Duration#ZERO} when free, and
 *     {@code ChronoUnit.FOREVER.getDuration()} for a key without expiry (not made by relock)
 * @param waiters how many live waiters are queued for it
 */
public record LockInfo(
        String name, String kind, Map<String, Integer> holders, long fencingToken,
        Duration remainingLease, int waiters) {

    public LockInfo {
        holders = Map.copyOf(holders);
    }

    /** Whether anyone holds the lock. */
    public boolean isHeld() {
        return !holders.isEmpty();
    }
}
