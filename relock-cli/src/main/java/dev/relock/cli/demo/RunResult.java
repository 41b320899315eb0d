package dev.relock.cli.demo;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.LongStream;

/**
 * What one phase of the engine measured, aggregated over its workers.
 *
 * @param locked whether the increments were made under the locks
 * @param workload what ran
 * @param elapsedMicros the longest phase of any worker, from its start signal to its last increment
 * @param increments the increments the workers completed: what the counters should add up to
 * @param countersTotal what the counters in Redis add up to afterwards
 * @param perWorker increments per worker process
 * @param acquireWait from asking for a lock to holding it (locked phase only)
 * @param handoff from one worker's release of a lock to the next acquisition of it by another
 *     worker, by the host's wall clock (locked phase only)
 * @param fencingViolations acquisitions whose token was not above the last one written under the
 *     lock (locked phase only)
 * @param leasesLost holds whose lease was found lost at release (locked phase only)
 * @param overlappingHolds successive holds of one lock whose holding times overlapped by the
 *     host's clock: mutual exclusion broke, or the clock was stepped (locked phase only)
 */
public record RunResult(boolean locked, Workload workload, long elapsedMicros, long increments, long countersTotal,
        long[] perWorker, Latencies acquireWait, Latencies handoff, long fencingViolations, long leasesLost,
        long overlappingHolds) {

    /** Increments the counters do not show: updates lost to a race. */
    public long lostUpdates() {
        return increments - countersTotal;
    }

    /** Increments (each one acquisition in the locked phase) per second. */
    public double throughputPerSecond() {
        return elapsedMicros == 0 ? 0 : increments * 1_000_000.0 / elapsedMicros;
    }

    public long fewestPerWorker() {
        return LongStream.of(perWorker).min().orElse(0);
    }

    public long mostPerWorker() {
        return LongStream.of(perWorker).max().orElse(0);
    }

    /** No update lost and the fencing tokens always rose. */
    public boolean passed() {
        return lostUpdates() == 0 && fencingViolations == 0;
    }

    /**
     * Aggregates a locked phase's acquisitions: waits, and handoffs between workers found by ordering
     * each lock's acquisitions by the time they were made.
     */
    static RunResult locked(Workload workload, long elapsedMicros, long increments, long countersTotal,
            long[] perWorker, List<Acquisition> acquisitions, long fencingViolations, long leasesLost) {
        long[] waits = acquisitions.stream().mapToLong(Acquisition::waitMicros).toArray();
        List<List<Acquisition>> byLock = new ArrayList<>();
        for (int lock = 0; lock < workload.locks(); lock++) {
            byLock.add(new ArrayList<>());
        }
        acquisitions.forEach(a -> byLock.get(a.lock()).add(a));
        List<Long> handoffs = new ArrayList<>();
        long overlapping = 0;
        for (List<Acquisition> holds : byLock) {
            holds.sort(Comparator.comparingLong(Acquisition::acquiredAtMicros));
            for (int i = 1; i < holds.size(); i++) {
                Acquisition before = holds.get(i - 1);
                Acquisition after = holds.get(i);
                long gap = after.acquiredAtMicros() - before.releasedAtMicros();
                if (gap < 0) {
                    overlapping++;
                } else if (after.worker() != before.worker()) {
                    handoffs.add(gap);
                }
            }
        }
        return new RunResult(true, workload, elapsedMicros, increments, countersTotal, perWorker,
                Latencies.of(waits), Latencies.of(handoffs.stream().mapToLong(Long::longValue).toArray()),
                fencingViolations, leasesLost, overlapping);
    }

    static RunResult unlocked(Workload workload, long elapsedMicros, long increments, long countersTotal,
            long[] perWorker) {
        return new RunResult(false, workload, elapsedMicros, increments, countersTotal, perWorker,
                Latencies.NONE, Latencies.NONE, 0, 0, 0);
    }
}
