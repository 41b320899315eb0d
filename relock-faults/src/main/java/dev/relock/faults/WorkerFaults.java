package dev.relock.faults;

import java.util.ArrayList;
import java.util.List;

/**
 * When the campaign killed or froze a worker, read from a history: the stretches in which a worker may have been
 * given a signal or a wake-up and never acted on it, so that a missed one there is not held against relock. A kill
 * reaches from its KILLED event; a freeze spans its fault (FAULT_START to the FAULT_END whose detail says
 * {@code paused}, as {@link Campaign.Run#pauseTheHolderPastTheLease} writes it).
 */
final class WorkerFaults {

    /** How long a killed waiter may still be chosen for a signal: its wait-set entry lapses after one lease. */
    static final long KILL_REACH_NANOS = Campaign.LEASE.toNanos() + 1_000_000_000L;

    /** Start and end stamps of each stretch, in pairs. */
    private final List<long[]> stretches;

    private WorkerFaults(List<long[]> stretches) {
        this.stretches = stretches;
    }

    /** The kills and freezes of {@code events}, which are in time order. */
    static WorkerFaults of(List<HistoryEvent> events) {
        List<long[]> stretches = new ArrayList<>();
        long faultStart = Long.MIN_VALUE;
        for (HistoryEvent e : events) {
            switch (e.kind()) {
                case KILLED -> stretches.add(new long[] {e.nanos(), e.nanos() + KILL_REACH_NANOS});
                case FAULT_START -> faultStart = e.nanos();
                case FAULT_END -> {
                    if (e.detail().contains(": paused")) {
                        stretches.add(new long[] {faultStart, e.nanos()});
                    }
                }
                default -> { }
            }
        }
        return new WorkerFaults(stretches);
    }

    /** Whether a kill's reach or a freeze meets the stretch from {@code fromNanos} to {@code toNanos}. */
    boolean meet(long fromNanos, long toNanos) {
        return stretches.stream().anyMatch(s -> s[0] <= toNanos && s[1] >= fromNanos);
    }
}
