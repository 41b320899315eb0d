package dev.relock;

/** The state of one hold on a lock, as its holder sees it. */
public enum LeaseState {
    /** Acquired, and as far as this client knows the lease is intact. */
    HELD,
    /** Given up by its holder. */
    RELEASED,
    /**
     * The lease ended while the holder still held the lock: it ran out, Redis lost the key (flush,
     * restart, failover) or an operator forced the lock open. Another owner may hold it now.
     */
    LOST
}
