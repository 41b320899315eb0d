package dev.relock.internal;

import java.util.Collection;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

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
}
