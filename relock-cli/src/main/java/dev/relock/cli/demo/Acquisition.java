package dev.relock.cli.demo;

/**
 * One acquisition in a locked phase, as a worker reports it.
 *
 * @param worker index of the worker process (set by the parent, not sent)
 * @param thread index of the thread inside the worker
 * @param lock index of the lock
 * @param token the fencing token of the acquisition
 * @param waitMicros from asking for the lock to holding it, by the worker's monotonic clock
 * @param acquiredAtMicros wall clock when the worker held the lock (µs since the epoch)
 * @param releasedAtMicros wall clock just before the worker released it
 * @param fencingViolation the token was not above the last one written under this lock
 */
record Acquisition(int worker, int thread, int lock, long token, long waitMicros,
        long acquiredAtMicros, long releasedAtMicros, boolean fencingViolation) {

    /** The protocol line, without the worker index (the parent knows whose stdout it reads). */
    String toLine() {
        return WorkerProtocol.ACQUISITION + ' ' + thread + ' ' + lock + ' ' + token + ' ' + waitMicros + ' '
                + acquiredAtMicros + ' ' + releasedAtMicros + ' ' + (fencingViolation ? 1 : 0);
    }

    /** Parses the fields after the leading "a" of a line from worker {@code worker}. */
    static Acquisition parse(int worker, String[] fields) {
        if (fields.length != 8) {
            throw new IllegalArgumentException("an acquisition has 7 fields, not " + (fields.length - 1));
        }
        return new Acquisition(worker, Integer.parseInt(fields[1]), Integer.parseInt(fields[2]),
                Long.parseLong(fields[3]), Long.parseLong(fields[4]), Long.parseLong(fields[5]),
                Long.parseLong(fields[6]), fields[7].equals("1"));
    }
}
