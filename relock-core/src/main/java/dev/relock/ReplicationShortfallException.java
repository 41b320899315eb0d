package dev.relock;

/**
 * An acquisition took the lock, but fewer replicas than the client's {@link ReplicationGuard}
 * requires acknowledged it in time, and the guard says {@link ReplicationGuard.OnShortfall#FAIL
 * FAIL}. The hold was undone in Redis before this was thrown: the caller holds nothing.
 */
public class ReplicationShortfallException extends RelockException {

    private final String lockName;
    private final long acknowledged;
    private final int required;

    /**
     * @param lockName the lock (for a multi-lock taken at once, its first lock)
     * @param acknowledged how many replicas acknowledged in time
     * @param required how many the guard requires
     * @param address the Redis the lock was taken at, as the client names it
     */
    public ReplicationShortfallException(String lockName, long acknowledged, int required, String address) {
        super("acquiring lock '" + lockName + "': only " + acknowledged + " of the " + required
                + " required replicas of Redis at " + address + " acknowledged it in time; the hold was undone");
        this.lockName = lockName;
        this.acknowledged = acknowledged;
        this.required = required;
    }

    /** The lock that was not acquired. */
    public String lockName() {
        return lockName;
    }

    /** How many replicas acknowledged the acquisition within the guard's timeout. */
    public long acknowledged() {
        return acknowledged;
    }

    /** How many the guard requires. */
    public int required() {
        return required;
    }
}
