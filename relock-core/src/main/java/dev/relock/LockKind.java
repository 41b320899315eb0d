package dev.relock;

/**
 * What kind of hold a {@link LockInfo} or {@link HeldLock} describes. Each has a lower-case
 * {@link #label()}, which is also its {@link #toString()}: the word the command line, the actuator
 * endpoint and the meters' {@code kind} tag show.
 */
public enum LockKind {
    /**
     * Held by one owner alone: an exclusive lock, or the write half of a read-write lock (also when
     * its writer has downgraded and holds the read half too). A multi-lock's members are held this way.
     */
    EXCLUSIVE("exclusive"),
    /** Held by readers: the read half of a read-write lock. */
    SHARED("shared"),
    /** Held by nobody; only {@link RelockClient#inspect} reports it, never a {@link HeldLock}. */
    FREE("free"),
    /** A semaphore, held or not: its holders hold permits. */
    SEMAPHORE("semaphore");

    private final String label;

    LockKind(String label) {
        this.label = label;
    }

    /** The lower-case word for this kind: {@code exclusive}, {@code shared}, {@code free} or {@code semaphore}. */
    public String label() {
        return label;
    }

    /** The same as {@link #label()}. */
    @Override
    public String toString() {
        return label;
    }
}
