package dev.relock.faults;

import java.util.Objects;

/**
 * One line of a fault-campaign history: {@code <nanos>\t<worker>\t<kind>\t<token>\t<detail>}, UTF-8, one
 * event a line. {@link #parse} and {@link #line} are inverses.
 *
 * @param nanos System.nanoTime() of the writing JVM; all processes of one host share CLOCK_MONOTONIC, so
 *     stamps compare across files
 * @param worker the writer's id, or {@link #CAMPAIGN} for the orchestrator
 * @param kind what happened
 * @param token the fencing token of the hold concerned, 0 when none
 * @param detail free text without tabs or line breaks, possibly empty
 */
record HistoryEvent(long nanos, String worker, EventKind kind, long token, String detail) {

    /** The worker id of the orchestrator's events. */
    static final String CAMPAIGN = "campaign";

    HistoryEvent {
        Objects.requireNonNull(kind, "kind");
        if (worker.isEmpty() || !isOneField(worker)) {
            throw new IllegalArgumentException("a worker id is non-empty, without tab or line break: '" + worker + "'");
        }
        if (!isOneField(detail)) {
            throw new IllegalArgumentException("a detail has no tab or line break: '" + detail + "'");
        }
    }

    static HistoryEvent parse(String line) {
        String[] fields = line.split("\t", -1);
        if (fields.length != 5) {
            throw new IllegalArgumentException(
                    "not a history line (" + fields.length + " tab-separated fields, not 5): " + line);
        }
        try {
            return new HistoryEvent(Long.parseLong(fields[0]), fields[1], EventKind.valueOf(fields[2]),
                    Long.parseLong(fields[3]), fields[4]);
        } catch (IllegalArgumentException e) { // a number that is none, an unknown kind, an empty worker
            throw new IllegalArgumentException("not a history line (" + e.getMessage() + "): " + line, e);
        }
    }

    String line() {
        return nanos + "\t" + worker + "\t" + kind + "\t" + token + "\t" + detail;
    }

    private static boolean isOneField(String text) {
        return text.indexOf('\t') < 0 && text.indexOf('\n') < 0 && text.indexOf('\r') < 0;
    }
}
