package dev.relock.internal;

import dev.relock.HeldLock;
import dev.relock.LeaseState;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Every hold of one client that is not yet given up, by lock key, mode and owner. The owner threads add
 * and remove their holds; the lease keeper walks the table to renew them. Thread-safe.
 */
public final class HoldTable {

    private record Id(String lockKey, LockMode mode, String owner) {}

    private final Map<Id, Hold> holds = new ConcurrentHashMap<>();

    public Hold get(String lockKey, LockMode mode, String owner) {
        return holds.get(new Id(lockKey, mode, owner));
    }

    public void add(Hold hold) {
        holds.put(new Id(hold.keys.lock(), hold.mode, hold.owner), hold);
    }

    public void remove(Hold hold) {
        holds.remove(new Id(hold.keys.lock(), hold.mode, hold.owner), hold);
    }

    public Collection<Hold> all() {
        return holds.values();
    }

    public int size() {
        return holds.size();
    }

    /** The holds still held (not lost), by name, kind and owner: {@code RelockClient.heldLocks()}. */
    public List<HeldLock> heldLocks() {
        long now = System.nanoTime();
        List<HeldLock> held = new ArrayList<>();
        for (Hold hold : holds.values()) {
            if (hold.state() != LeaseState.HELD) {
                continue;
            }
            long leftMillis = TimeUnit.NANOSECONDS.toMillis(Math.max(0, hold.leaseEndNanos() - now));
            held.add(new HeldLock(hold.lockName, LockEvents.kindOf(hold.mode), hold.owner,
                    hold.fencingToken, Instant.ofEpochMilli(hold.heldSinceMillis),
                    Duration.ofMillis(leftMillis), hold.renewed()));
        }
        held.sort(Comparator.comparing(HeldLock::name).thenComparing(HeldLock::kind).thenComparing(HeldLock::owner));
        return held;
    }
}
