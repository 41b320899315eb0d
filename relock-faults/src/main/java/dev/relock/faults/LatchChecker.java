package dev.relock.faults;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Judges the latch workload's history ({@link LatchRounds}, {@link LatchCoordinator}): latches that opened early and
 * waiters that missed an opening.
 *
 * <p>A round's latch is armed with a count (ROUND_SET) and expires {@link LatchCoordinator#IDLE_EXPIRY} after; it
 * <b>opened early</b> for a waiter whose await returned true (LATCH_OPEN) before as many count-downs had been sent
 * (COUNT_SENT) as the count, while the round had not expired: a latch opens only at zero, never on expiry. (After the
 * expiry a waiter finds no latch, as one never set, and returns at once: not judged.) A round <b>opened</b> at the
 * first COUNTED that left 0 once the count's worth of count-downs had been sent, before the expiry. A waiter
 * <b>missed</b> an opening when its await timed out (LATCH_TIMEOUT) although its round opened more than
 * {@link #GRACE_NANOS} before its deadline (its LATCH_WAIT plus its timeout); left out when a worker was killed or
 * frozen meanwhile ({@link WorkerFaults}).
 */
final class LatchChecker {

    /** How long an opening may take to reach a waiter, with a reconnect in the way. */
    static final long GRACE_NANOS = 1_000_000_000L;

    /**
     * @param rounds rounds armed
     * @param opened rounds that opened
     * @param wakeups awaits that returned true
     * @param openedEarly awaits that returned true before the count's worth of count-downs, before the expiry
     * @param missedWakeups awaits that timed out although their round had opened more than grace before their deadline
     * @param operations count-downs sent and awaits begun (COUNT_SENT and LATCH_WAIT): the workload's operations
     */
    record LatchFindings(int rounds, int opened, int wakeups, int openedEarly, int missedWakeups, int operations) {

        boolean clean() {
            return openedEarly == 0 && missedWakeups == 0;
        }
    }

    private record Round(long setNanos, long count) {}

    private LatchChecker() {
    }

    /** Judges {@code events}, which are in time order. */
    static LatchFindings check(List<HistoryEvent> events) {
        long expiry = LatchCoordinator.IDLE_EXPIRY.toNanos();
        WorkerFaults faults = WorkerFaults.of(events);
        Map<Long, Round> rounds = new HashMap<>();
        Map<Long, Integer> sent = new HashMap<>();
        Map<Long, Long> openedAt = new HashMap<>();
        Map<String, HistoryEvent> waits = new HashMap<>(); // worker -> its LATCH_WAIT not yet answered
        int wakeups = 0;
        int early = 0;
        int missed = 0;
        int operations = 0;
        for (HistoryEvent e : events) {
            Round round = rounds.get(e.token());
            switch (e.kind()) {
                case ROUND_SET -> rounds.put(e.token(), new Round(e.nanos(), Long.parseLong(e.detail())));
                case COUNT_SENT -> {
                    operations++;
                    sent.merge(e.token(), 1, Integer::sum);
                }
                case COUNTED -> {
                    if (round != null && e.detail().equals("0") && sent.getOrDefault(e.token(), 0) >= round.count()
                            && e.nanos() < round.setNanos() + expiry) {
                        openedAt.putIfAbsent(e.token(), e.nanos());
                    }
                }
                case LATCH_WAIT -> {
                    operations++;
                    waits.put(e.worker(), e);
                }
                case LATCH_OPEN -> {
                    wakeups++;
                    waits.remove(e.worker());
                    early += round != null && sent.getOrDefault(e.token(), 0) < round.count()
                            && e.nanos() < round.setNanos() + expiry ? 1 : 0;
                }
                case LATCH_TIMEOUT -> {
                    HistoryEvent wait = waits.remove(e.worker());
                    Long opened = openedAt.get(e.token());
                    if (wait != null && opened != null) {
                        long deadline = wait.nanos() + Long.parseLong(wait.detail()) * 1_000_000L;
                        missed += opened < deadline - GRACE_NANOS && !faults.meet(wait.nanos(), e.nanos()) ? 1 : 0;
                    }
                }
                default -> { }
            }
        }
        return new LatchFindings(rounds.size(), openedAt.size(), wakeups, early, missed, operations);
    }
}
