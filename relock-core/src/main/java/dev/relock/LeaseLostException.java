package dev.relock;

/**
 * Thrown when a holder releases or re-enters a lock whose lease was lost while it was held: the
 * lease ran out, Redis lost the key, or the lock was forced open. Whatever the holder did after the
 * loss may have overlapped with another holder; fencing tokens let the protected resource tell.
 */
public class LeaseLostException extends IllegalMonitorStateException {

    private final String lockName;

    public LeaseLostException(String lockName, String reason) {
        super("lease of lock '" + lockName + "' was lost while held: " + reason);
        this.lockName = lockName;
    }

    /** The name of the lock whose lease was lost. */
    public String lockName() {
        return lockName;
    }
}
