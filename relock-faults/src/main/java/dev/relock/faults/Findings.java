package dev.relock.faults;

import java.util.Locale;

/**
 * What {@link HistoryChecker} found in one campaign history. A count that cannot be known is -1.
 *
 * @param criticalSections ACQUIRED events
 * @param untoldOverlaps sections that began while another worker's section was open and that holder had not been
 *     told its hold was lost: mutual exclusion broken without notice
 * @param toldOverlaps sections that began while other workers' sections were open, every one of whose holders had
 *     been told of the loss
 * @param lostNotices distinct holds (worker and token) a LOST notice was given for
 * @param lostNoticesBeforeOverlap of those, notices no later than the first section their hold's section overlapped
 * @param lostNoticesAfterOverlap of those, notices later than it; notices for sections that overlapped none are in
 *     neither
 * @param staleWritesAccepted accepted fenced writes sent after the reply to an accepted write of a higher token, or
 *     of the same token by another worker (one token, two holders)
 * @param refusedWrites WRITE_REFUSED events: writes fencing caught
 * @param staleSqlWritesAccepted as staleWritesAccepted, for the SQL row fenced by JdbcFence
 * @param refusedSqlWrites SQL_REFUSED events
 * @param counterIncrements COUNTER events: increments written
 * @param counterFinal the counter read at the end, -1 when the history has none
 * @param unfencedLostUpdates increments that wrote back a value another increment had also read (each COUNTER is
 *     logged once its write is done, with the value it read): under exclusion every increment reads another value
 * @param maxUnavailableNanos the longest stretch with a worker waiting and no section open
 * @param faults FAULT_START events
 * @param kills KILLED events
 * @param errors ERROR events
 * @param readersPastAWaitingWriter read sections that began while a writer that asked first still waited (a
 *     statistic of writer preference, see {@link HistoryChecker})
 * @param queue the condition workload's items and signals ({@link QueueChecker})
 * @param latch the latch workload's rounds ({@link LatchChecker})
 */
record Findings(
        int criticalSections,
        int untoldOverlaps,
        int toldOverlaps,
        int lostNotices,
        int lostNoticesBeforeOverlap,
        int lostNoticesAfterOverlap,
        int staleWritesAccepted,
        int refusedWrites,
        int staleSqlWritesAccepted,
        int refusedSqlWrites,
        int counterIncrements,
        long counterFinal,
        long unfencedLostUpdates,
        long maxUnavailableNanos,
        int faults,
        int kills,
        int errors,
        int readersPastAWaitingWriter,
        QueueChecker.QueueFindings queue,
        LatchChecker.LatchFindings latch) {

    String summary() {
        return String.format(Locale.ROOT,
                "%d sections, %d untold overlaps, %d told overlaps; %d lost notices (%d before overlap, %d after);"
                        + " %d stale writes accepted, %d refused; SQL: %d stale accepted, %d refused; %d counter increments, final %s, lost updates %s;"
                        + " longest unavailable %.3f ms; %d faults, %d kills, %d errors",
                criticalSections, untoldOverlaps, toldOverlaps, lostNotices, lostNoticesBeforeOverlap,
                lostNoticesAfterOverlap, staleWritesAccepted, refusedWrites, staleSqlWritesAccepted, refusedSqlWrites,
                counterIncrements,
                orUnknown(counterFinal), orUnknown(unfencedLostUpdates), maxUnavailableNanos / 1e6, faults, kills,
                errors) + workloadSummary();
    }

    /** What the queue, the latch and the readers showed, where the history has any. */
    private String workloadSummary() {
        String summary = readersPastAWaitingWriter == 0 ? ""
                : "; " + readersPastAWaitingWriter + " readers past a waiting writer";
        if (queue.produced() > 0) {
            summary += String.format(Locale.ROOT, "; queue: %d produced, %d taken, %d lost, %d duplicated, %d lost signals",
                    queue.produced(), queue.taken(), queue.lost(), queue.duplicated(), queue.lostSignals());
        }
        if (latch.rounds() > 0) {
            summary += String.format(Locale.ROOT, "; latch: %d operations, %d rounds, %d opened, %d wake-ups,"
                    + " %d opened early, %d missed wake-ups", latch.operations(), latch.rounds(), latch.opened(),
                    latch.wakeups(), latch.openedEarly(), latch.missedWakeups());
        }
        return summary;
    }

    private static String orUnknown(long count) {
        return count < 0 ? "unknown" : Long.toString(count);
    }
}
