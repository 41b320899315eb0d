package dev.relock.internal.engine;

/**
 * The latest events of one acquisition, for the ERROR line that diagnoses it: each with when (ms on the client's
 * {@link Ticker}, modulo 100 s) and on which thread it was handled. Kept only with
 * {@code -Drelock.internal.traceAcquisitions=true}. Guarded by the acquisition's lock.
 */
final class EventTrail {

    private static final int LENGTH = 32;

    private final String[] events = new String[LENGTH];
    // how many events were added; the latest LENGTH of them are kept
    private long added;

    /** Notes {@code event}, handled at {@code nanos} in the calling thread. */
    void add(long nanos, String event) {
        events[(int) (added++ % LENGTH)] = (nanos / 1_000_000 % 100_000) + "ms " + Thread.currentThread().getName()
                + " " + event;
    }

    /** The events kept, oldest first, each on a line of its own. */
    @Override
    public String toString() {
        StringBuilder lines = new StringBuilder("; trail:");
        for (long i = Math.max(0, added - LENGTH); i < added; i++) {
            lines.append("\n  ").append(events[(int) (i % LENGTH)]);
        }
        return lines.toString();
    }
}
