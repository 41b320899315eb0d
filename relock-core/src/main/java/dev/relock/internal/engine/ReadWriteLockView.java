package dev.relock.internal.engine;

import dev.relock.RelockLock;
import dev.relock.RelockReadWriteLock;

/**
 * The read-write lock a client hands out: its two halves, made by the client for the same lock name.
 * Immutable; any thread.
 *
 * @param name the lock's name
 * @param readLock the shared half
 * @param writeLock the exclusive half
 * @param topology how {@link #toString()} names the client's kind of deployment, or null for a single Redis
 */
record ReadWriteLockView(String name, RelockLock readLock, RelockLock writeLock, String topology)
        implements RelockReadWriteLock {

    @Override
    public String toString() {
        return "RelockReadWriteLock[" + name + (topology == null ? "" : ", " + topology) + "]";
    }
}
