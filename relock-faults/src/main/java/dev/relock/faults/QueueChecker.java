package dev.relock.faults;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Judges the condition workload's history ({@link QueueSections}): items lost or taken twice, and signals lost.
 *
 * <p>An item is taken by a consumer that logged CONSUMING for it and then CONSUMED (whatever it removed); a CONSUMING
 * that its worker's CONSUMED does not follow (killed, failed) leaves the item in doubt: it may or may not have been
 * removed. An item is <b>lost</b> when it was PRODUCED and neither taken, in doubt, nor DRAINED at the end; it is
 * <b>duplicated</b> when taken and drained more than once in all.
 *
 * <p>A signal is <b>lost</b> when an item signalled at t is not taken (CONSUMING) by t + {@link #GRACE_NANOS} although
 * a consumer was awaiting from before the item was produced until after t + grace. Sound because a consumer awaits
 * only after finding the queue empty under the lock, so that consumer had joined the wait set before the producer got
 * the lock: the signal found a waiter, which, woken, takes the lock again and the queue's head; a woken waiter that
 * finds the queue empty, because another took the item, means the item was taken. Left out: items signalled within
 * the reach of a kill or a freeze of a worker ({@link WorkerFaults}), which may have taken the signal and died or slept
 * on it, and items signalled less than grace before the history ends.
 */
final class QueueChecker {

    /** How long a woken waiter may take to get the lock back, with a fault of Redis (2 s at most) in the way. */
    static final long GRACE_NANOS = 4_000_000_000L;

    /**
     * @param produced PRODUCED items
     * @param taken distinct items taken
     * @param lost produced items neither taken, in doubt, nor drained
     * @param duplicated items taken or drained more than once in all
     * @param lostSignals items not taken within grace of their signal while a consumer awaited throughout
     */
    record QueueFindings(int produced, int taken, int lost, int duplicated, int lostSignals) {

        boolean clean() {
            return lost == 0 && duplicated == 0 && lostSignals == 0;
        }
    }

    /** An await from its AWAIT_START to its worker's next AWAIT_END or ERROR, or a KILLED of its process. */
    private record Await(String worker, long startNanos, long endNanos) {}

    private QueueChecker() {
    }

    /** Judges {@code events}, which are in time order. */
    static QueueFindings check(List<HistoryEvent> events) {
        Set<String> produced = new HashSet<>();
        Map<String, Integer> taken = new HashMap<>();
        Map<String, Integer> drained = new HashMap<>();
        Set<String> inDoubt = new HashSet<>();
        Map<String, String> consuming = new HashMap<>(); // worker -> the item of its CONSUMING not yet followed
        for (HistoryEvent e : events) {
            switch (e.kind()) {
                case PRODUCED -> produced.add(e.detail());
                case CONSUMING -> {
                    String earlier = consuming.put(e.worker(), e.detail());
                    if (earlier != null) {
                        inDoubt.add(earlier);
                    }
                }
                case CONSUMED -> {
                    String item = consuming.remove(e.worker());
                    if (item != null) {
                        taken.merge(item, 1, Integer::sum);
                    }
                }
                case DRAINED -> drained.merge(e.detail(), 1, Integer::sum);
                case ERROR -> {
                    String item = consuming.remove(e.worker());
                    if (item != null) {
                        inDoubt.add(item);
                    }
                }
                case KILLED -> consuming.entrySet().removeIf(open -> {
                    boolean killed = HistoryChecker.isOf(open.getKey(), e.detail());
                    if (killed) {
                        inDoubt.add(open.getValue());
                    }
                    return killed;
                });
                default -> { }
            }
        }
        inDoubt.addAll(consuming.values());
        int lost = 0;
        for (String item : produced) {
            lost += taken.containsKey(item) || inDoubt.contains(item) || drained.containsKey(item) ? 0 : 1;
        }
        Set<String> seen = new HashSet<>(taken.keySet());
        seen.addAll(drained.keySet());
        int duplicated = 0;
        for (String item : seen) {
            duplicated += taken.getOrDefault(item, 0) + drained.getOrDefault(item, 0) > 1 ? 1 : 0;
        }
        return new QueueFindings(produced.size(), taken.size(), lost, duplicated, lostSignals(events));
    }

    private static int lostSignals(List<HistoryEvent> events) {
        if (events.isEmpty()) {
            return 0;
        }
        long lastNanos = events.get(events.size() - 1).nanos();
        List<Await> awaits = awaits(events);
        WorkerFaults faults = WorkerFaults.of(events);
        Map<String, Long> producedAt = new HashMap<>();
        Map<String, Long> signalledAt = new HashMap<>();
        Map<String, Long> takenAt = new HashMap<>();
        for (HistoryEvent e : events) {
            switch (e.kind()) {
                case PRODUCED -> producedAt.putIfAbsent(e.detail(), e.nanos());
                case SIGNALLED -> signalledAt.putIfAbsent(e.detail(), e.nanos());
                case CONSUMING -> takenAt.putIfAbsent(e.detail(), e.nanos());
                default -> { }
            }
        }
        int lost = 0;
        for (Map.Entry<String, Long> signal : signalledAt.entrySet()) {
            long signalled = signal.getValue();
            long owedBy = signalled + GRACE_NANOS;
            Long produced = producedAt.get(signal.getKey());
            if (produced == null || owedBy > lastNanos || takenAt.getOrDefault(signal.getKey(), Long.MAX_VALUE) <= owedBy
                    || faults.meet(signalled - WorkerFaults.KILL_REACH_NANOS, owedBy)) {
                continue;
            }
            lost += awaits.stream().anyMatch(a -> a.startNanos() < produced && a.endNanos() > owedBy) ? 1 : 0;
        }
        return lost;
    }

    private static List<Await> awaits(List<HistoryEvent> events) {
        Map<String, Long> awaiting = new HashMap<>(); // worker -> stamp of its AWAIT_START
        List<Await> awaits = new ArrayList<>();
        for (HistoryEvent e : events) {
            switch (e.kind()) {
                case AWAIT_START -> awaiting.put(e.worker(), e.nanos());
                case AWAIT_END, ERROR -> {
                    Long start = awaiting.remove(e.worker());
                    if (start != null) {
                        awaits.add(new Await(e.worker(), start, e.nanos()));
                    }
                }
                case KILLED -> awaiting.entrySet().removeIf(open -> {
                    boolean killed = HistoryChecker.isOf(open.getKey(), e.detail());
                    if (killed) {
                        awaits.add(new Await(open.getKey(), open.getValue(), e.nanos()));
                    }
                    return killed;
                });
                default -> { }
            }
        }
        awaiting.forEach((worker, start) -> awaits.add(new Await(worker, start, Long.MAX_VALUE)));
        return awaits;
    }
}
