package dev.relock.faults;

/**
 * What one critical section holds, as the detail of its REQUEST and ACQUIRED events: a lock's name and the mode it
 * is held in. Written by the workers ({@link #detail()}), read by {@link HistoryChecker} ({@link #parse}).
 *
 * <p>Details: {@code ""} is the exclusive lock {@value FaultWorker#LOCK} (the histories of the single-threaded
 * exclusive workload); {@code "name"} an exclusive hold of {@code name} (a lock, a write lock, a multi-lock's
 * member); {@code "name read"} a read hold; {@code "name permit N"} one permit of a semaphore of N.
 *
 * @param lock the name of what is held
 * @param mode how it is held
 * @param permits how many sections may be open on it at once when all are permits; 1 otherwise
 */
record Claim(String lock, Mode mode, int permits) {

    /** How a section holds its lock. */
    enum Mode {
        /** Excludes every other section on the lock. */
        EXCLUSIVE,
        /** Shares the lock with other reads, excludes exclusive holds. */
        READ,
        /** One of {@link #permits} that may be out at once. */
        PERMIT
    }

    Claim {
        if (lock.isEmpty() || lock.contains(" ") || permits < 1 || (mode != Mode.PERMIT && permits != 1)) {
            throw new IllegalArgumentException("not a claim: lock '" + lock + "', " + mode + ", " + permits + " permits");
        }
    }

    static Claim exclusive(String lock) {
        return new Claim(lock, Mode.EXCLUSIVE, 1);
    }

    static Claim read(String lock) {
        return new Claim(lock, Mode.READ, 1);
    }

    static Claim permit(String semaphore, int permits) {
        return new Claim(semaphore, Mode.PERMIT, permits);
    }

    /** The claim a REQUEST or ACQUIRED detail names; fails naming the detail when it is none. */
    static Claim parse(String detail) {
        String[] words = detail.isEmpty() ? new String[] {FaultWorker.LOCK} : detail.split(" ");
        try {
            if (words.length == 1) {
                return exclusive(words[0]);
            }
            if (words.length == 2 && words[1].equals("read")) {
                return read(words[0]);
            }
            if (words.length == 3 && words[1].equals("permit")) {
                return permit(words[0], Integer.parseInt(words[2]));
            }
        } catch (IllegalArgumentException e) { // a count that is none, an empty name
            throw new IllegalArgumentException("not a claim: '" + detail + "' (" + e.getMessage() + ")", e);
        }
        throw new IllegalArgumentException("not a claim: '" + detail + "'; one is 'name', 'name read' or 'name permit N'");
    }

    /** The detail that {@link #parse} reads back as this claim. */
    String detail() {
        return switch (mode) {
            case EXCLUSIVE -> lock;
            case READ -> lock + " read";
            case PERMIT -> lock + " permit " + permits;
        };
    }

    /** Whether a section holding this and one holding {@code other}, on the same lock, may be open at once. */
    boolean excludes(Claim other) {
        return switch (mode) {
            case EXCLUSIVE -> true;
            case READ -> other.mode != Mode.READ;
            case PERMIT -> true; // permits exclude each other once {@link #permits} are out
        };
    }
}
