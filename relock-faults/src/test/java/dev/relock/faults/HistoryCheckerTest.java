package dev.relock.faults;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HistoryCheckerTest {

    /** A history line written with spaces for tabs: nanos, worker, kind, token and an optional one-word detail. */
    private static String line(String spaced) {
        String tabbed = spaced.replace(' ', '\t');
        return spaced.split(" ").length == 4 ? tabbed + "\t" : tabbed;
    }

    private static Findings check(String... spacedLines) {
        return HistoryChecker.check(Arrays.stream(spacedLines).map(l -> HistoryEvent.parse(line(l))).toList());
    }

    @Test
    void cleanAlternationHasNoOverlap() {
        Findings findings = check(
                "100 w1 REQUEST 0",
                "110 w1 ACQUIRED 1",
                "120 w2 REQUEST 0",
                "200 w1 RELEASED 1",
                "210 w2 ACQUIRED 2",
                "300 w2 RELEASED 2");

        assertThat(findings.criticalSections()).isEqualTo(2);
        assertThat(findings.untoldOverlaps()).isZero();
        assertThat(findings.toldOverlaps()).isZero();
        assertThat(findings.lostNotices()).isZero();
        assertThat(findings.maxUnavailableNanos()).isEqualTo(10); // 100..110 and 200..210
    }

    @Test
    void aSectionEndsWhenItsWorkerStartsReleasingNotWhenUnlockReturns() {
        Findings findings = check(
                "100 w1 ACQUIRED 1",
                "150 w1 RELEASING 1",
                "160 w2 ACQUIRED 2",
                "170 w1 RELEASED 1",
                "200 w2 RELEASING 2",
                "210 w2 RELEASED 2");

        assertThat(findings.untoldOverlaps()).isZero();
        assertThat(findings.toldOverlaps()).isZero();
        assertThat(findings.criticalSections()).isEqualTo(2);
    }

    @Test
    void overlapWithAHolderNeverToldIsUntold() {
        Findings findings = check(
                "100 w1 ACQUIRED 1",
                "200 w2 ACQUIRED 2",
                "300 w1 RELEASED 1",
                "400 w2 RELEASED 2");

        assertThat(findings.untoldOverlaps()).isEqualTo(1);
        assertThat(findings.toldOverlaps()).isZero();
    }

    @Test
    void holderToldBeforeTheOverlapMakesItTold() {
        Findings findings = check(
                "100 w1 ACQUIRED 1",
                "150 w1 LOST 1",
                "200 w2 ACQUIRED 2",
                "250 w1 RELEASE_LOST 1",
                "300 w2 RELEASED 2");

        assertThat(findings.untoldOverlaps()).isZero();
        assertThat(findings.toldOverlaps()).isEqualTo(1);
        assertThat(findings.lostNotices()).isEqualTo(1);
        assertThat(findings.lostNoticesBeforeOverlap()).isEqualTo(1);
        assertThat(findings.lostNoticesAfterOverlap()).isZero();
    }

    @Test
    void noticeStampedWithTheOverlapCountsAsBefore() {
        Findings findings = check(
                "100 w1 ACQUIRED 1",
                "200 w2 ACQUIRED 2",
                "200 w1 LOST 1");

        assertThat(findings.untoldOverlaps()).isZero();
        assertThat(findings.toldOverlaps()).isEqualTo(1);
        assertThat(findings.lostNoticesBeforeOverlap()).isEqualTo(1);
    }

    @Test
    void holderToldAfterTheOverlapLeavesItUntold() {
        Findings findings = check(
                "100 w1 ACQUIRED 1",
                "200 w2 ACQUIRED 2",
                "250 w1 LOST 1",
                "260 w1 RELEASE_LOST 1",
                "300 w2 RELEASED 2");

        assertThat(findings.untoldOverlaps()).isEqualTo(1);
        assertThat(findings.toldOverlaps()).isZero();
        assertThat(findings.lostNotices()).isEqualTo(1);
        assertThat(findings.lostNoticesBeforeOverlap()).isZero();
        assertThat(findings.lostNoticesAfterOverlap()).isEqualTo(1);
    }

    @Test
    void lostNoticeOfASectionThatOverlappedNoneIsNeitherBeforeNorAfter() {
        Findings findings = check(
                "100 w1 ACQUIRED 1",
                "150 w1 RELEASE_LOST 1",
                "160 w1 LOST 1", // the listener may speak after unlock threw
                "160 w1 LOST 1",
                "200 w2 ACQUIRED 2");

        assertThat(findings.lostNotices()).isEqualTo(1);
        assertThat(findings.lostNoticesBeforeOverlap()).isZero();
        assertThat(findings.lostNoticesAfterOverlap()).isZero();
        assertThat(findings.untoldOverlaps()).isZero();
    }

    @Test
    void aSectionIsCountedOnceAndIsToldOnlyIfEveryOpenHolderWasTold() {
        Findings findings = check(
                "100 w1 ACQUIRED 1",
                "110 w1 LOST 1",
                "200 w2 ACQUIRED 2", // only w1 open, told: a told overlap
                "300 w3 ACQUIRED 3", // w1 told, w2 not: one untold overlap
                "400 w4 ACQUIRED 4", // w1, w2, w3 open: still one
                "500 w1 RELEASE_LOST 1",
                "510 w2 RELEASED 2",
                "520 w3 RELEASED 3",
                "530 w4 RELEASED 4");

        assertThat(findings.criticalSections()).isEqualTo(4);
        assertThat(findings.toldOverlaps()).isEqualTo(1);
        assertThat(findings.untoldOverlaps()).isEqualTo(2);
    }

    @Test
    void killedHolderEndsItsSectionAndUnavailabilityRunsFromTheKill() {
        Findings findings = check(
                "100 w1 REQUEST 0",
                "100 w1 ACQUIRED 1",
                "120 w2 REQUEST 0",
                "200 campaign KILLED 0 w1",
                "1200 w2 ACQUIRED 2",
                "1300 w2 RELEASED 2");

        assertThat(findings.kills()).isEqualTo(1);
        assertThat(findings.untoldOverlaps()).isZero();
        assertThat(findings.toldOverlaps()).isZero();
        assertThat(findings.maxUnavailableNanos()).isEqualTo(1000);
    }

    @Test
    void workerKilledWhileWaitingNoLongerWaits() {
        Findings findings = check(
                "100 w1 ACQUIRED 1",
                "110 w2 REQUEST 0",
                "200 w1 RELEASED 1",
                "250 campaign KILLED 0 w2",
                "900 w1 REQUEST 0",
                "910 w1 ACQUIRED 2");

        assertThat(findings.maxUnavailableNanos()).isEqualTo(50);
    }

    @Test
    void unavailabilityStillRunningAtTheEndCountsToTheLastEvent() {
        Findings findings = check(
                "100 w1 ACQUIRED 1",
                "110 w2 REQUEST 0",
                "200 w1 RELEASED 1",
                "700 campaign FAULT_END 0 pause");

        assertThat(findings.maxUnavailableNanos()).isEqualTo(500);
    }

    @Test
    void sectionOpenWhenTheRunStoppedEndsAtItsWorkersLastEvent() {
        Findings findings = check(
                "100 w1 ACQUIRED 1",
                "150 w1 WRITE_SENT 1",
                "200 w2 REQUEST 0",
                "300 w2 ACQUIRED 2");

        assertThat(findings.criticalSections()).isEqualTo(2);
        assertThat(findings.untoldOverlaps()).isZero();
        assertThat(findings.maxUnavailableNanos()).isEqualTo(100);
    }

    @Test
    void reacquiringWithoutALoggedReleaseEndsThePreviousSection() {
        Findings findings = check(
                "100 w1 ACQUIRED 1",
                "200 w1 ACQUIRED 2",
                "300 w1 RELEASED 2",
                "400 w2 ACQUIRED 3",
                "500 w2 RELEASED 3");

        assertThat(findings.criticalSections()).isEqualTo(3);
        assertThat(findings.untoldOverlaps()).isZero();
        assertThat(findings.toldOverlaps()).isZero();
    }

    @Test
    void errorEndsTheOpenSection() {
        Findings findings = check(
                "100 w1 ACQUIRED 1",
                "150 w1 ERROR 1 timeout",
                "200 w2 ACQUIRED 2",
                "300 w2 RELEASED 2");

        assertThat(findings.errors()).isEqualTo(1);
        assertThat(findings.untoldOverlaps()).isZero();
    }

    @Test
    void acceptedWriteSentAfterAHigherTokenWasAcceptedIsStale() {
        Findings findings = check(
                "100 w1 WRITE_SENT 5",
                "110 w1 WRITE_OK 5",
                "120 w2 WRITE_SENT 4",
                "130 w2 WRITE_OK 4",
                "140 w3 WRITE_SENT 6",
                "150 w3 WRITE_OK 6",
                "160 w2 WRITE_SENT 4", // stale again, behind both 5 and 6: counted once
                "170 w2 WRITE_OK 4");

        assertThat(findings.staleWritesAccepted()).isEqualTo(2);
    }

    @Test
    void writesWhoseIntervalsOverlapHaveNoCertainOrder() {
        Findings findings = check(
                "100 w1 WRITE_SENT 5",
                "105 w2 WRITE_SENT 4",
                "110 w1 WRITE_OK 5",
                "115 w2 WRITE_OK 4");

        assertThat(findings.staleWritesAccepted()).isZero();
    }

    @Test
    void refusedWritesAreCountedAndNotJudgedForOrder() {
        Findings findings = check(
                "100 w1 WRITE_SENT 5",
                "110 w1 WRITE_OK 5",
                "120 w2 WRITE_SENT 4",
                "130 w2 WRITE_REFUSED 4",
                "140 w2 WRITE_SENT 4",
                "150 w2 WRITE_REFUSED 4");

        assertThat(findings.refusedWrites()).isEqualTo(2);
        assertThat(findings.staleWritesAccepted()).isZero();
    }

    @Test
    void aWriteWithTheTokenAnotherWorkerAlreadyWroteWithIsStaleButTheSameHoldMayWriteAgain() {
        Findings findings = check(
                "100 w1 WRITE_SENT 7",
                "110 w1 WRITE_OK 7",
                "120 w1 WRITE_SENT 7",
                "130 w1 WRITE_OK 7",
                "200 w2 WRITE_SENT 7",
                "210 w2 WRITE_OK 7");

        assertThat(findings.staleWritesAccepted()).isEqualTo(1);
    }

    @Test
    void theSqlRowIsJudgedOnItsOwnLikeTheRegister() {
        Findings findings = check(
                "100 w1 WRITE_SENT 5",
                "110 w1 WRITE_OK 5",
                "120 w1 SQL_SENT 5",
                "130 w1 SQL_OK 5",
                "140 w2 WRITE_SENT 4",
                "150 w2 WRITE_REFUSED 4", // the register refused it
                "160 w2 SQL_SENT 4",
                "170 w2 SQL_OK 4", // the row accepted it behind 5: stale
                "180 w3 SQL_SENT 6",
                "190 w3 SQL_REFUSED 6");

        assertThat(findings.staleWritesAccepted()).isZero();
        assertThat(findings.refusedWrites()).isEqualTo(1);
        assertThat(findings.staleSqlWritesAccepted()).isEqualTo(1);
        assertThat(findings.refusedSqlWrites()).isEqualTo(1);
    }

    @Test
    void aLostUpdateIsAnIncrementThatReadAValueAnotherAlsoRead() {
        Findings findings = check(
                "100 w1 COUNTER 1 0",
                "110 w2 COUNTER 2 0",
                "120 w1 COUNTER 1 1",
                "900 campaign COUNTER_FINAL 0 2");

        assertThat(findings.counterIncrements()).isEqualTo(3);
        assertThat(findings.counterFinal()).isEqualTo(2);
        assertThat(findings.unfencedLostUpdates()).isEqualTo(1);
    }

    @Test
    void theFinalCounterIsUnknownWithoutItsEventAndLostUpdatesDoNotNeedIt() {
        Findings findings = check("100 w1 COUNTER 1 0", "200 w2 COUNTER 2 0", "300 w1 COUNTER 3 1");

        assertThat(findings.counterFinal()).isEqualTo(-1);
        assertThat(findings.unfencedLostUpdates()).isEqualTo(1);
        assertThat(findings.summary()).contains("final unknown, lost updates 1");
    }

    @Test
    void failedAttemptsFollowedByAnotherAreOneWaitForUnavailability() {
        Findings findings = check(
                "100 w1 REQUEST 0",
                "110 w1 ERROR 0 unreachable",
                "160 w1 REQUEST 0",
                "170 w1 ERROR 0 unreachable",
                "220 w1 REQUEST 0",
                "400 w1 ACQUIRED 5",
                "450 w1 RELEASED 5",
                "500 w2 REQUEST 0",
                "510 w2 ERROR 0 unreachable"); // w2's last word: its wait ends here

        assertThat(findings.maxUnavailableNanos()).isEqualTo(300); // 100..400, through both errors
    }

    @Test
    void faultsKillsAndErrorsAreCountedAndSummarised() {
        Findings findings = check(
                "100 campaign FAULT_START 0 partition",
                "150 w1 ERROR 0 timeout",
                "200 campaign FAULT_END 0 partition",
                "210 campaign FAULT_START 0 kill",
                "220 campaign KILLED 0 w2");

        assertThat(findings.faults()).isEqualTo(2);
        assertThat(findings.kills()).isEqualTo(1);
        assertThat(findings.errors()).isEqualTo(1);
        assertThat(findings.summary()).contains("2 faults, 1 kills, 1 errors").doesNotContain("\n");
    }

    @Test
    void lineAndParseAreInverses() {
        HistoryEvent event = new HistoryEvent(-42, "w3", EventKind.ERROR, 7, "lock timed out after 5 s");
        HistoryEvent noDetail = new HistoryEvent(1, HistoryEvent.CAMPAIGN, EventKind.FAULT_START, 0, "");

        assertThat(HistoryEvent.parse(event.line())).isEqualTo(event);
        assertThat(HistoryEvent.parse(noDetail.line())).isEqualTo(noDetail);
        assertThat(noDetail.line()).isEqualTo("1\tcampaign\tFAULT_START\t0\t");
    }

    @Test
    void eventsThatCouldNotBeWrittenAsOneLineAreRefused() {
        assertThatThrownBy(() -> new HistoryEvent(1, "w1", EventKind.ERROR, 0, "two\tfields"))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new HistoryEvent(1, "", EventKind.REQUEST, 0, ""))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void unparsableLineFailsNamingFileLineAndText(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("w1.history");
        Files.write(file, List.of(line("100 w1 REQUEST 0"), "100\tw1\tSLEPT\t0\t"), UTF_8);

        assertThatThrownBy(() -> HistoryChecker.read(file))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(file + ":2:")
                .hasMessageContaining("100\tw1\tSLEPT\t0\t");
        assertThatThrownBy(() -> HistoryEvent.parse("100 w1 REQUEST 0"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("100 w1 REQUEST 0");
        assertThatThrownBy(() -> HistoryEvent.parse("soon\tw1\tREQUEST\t0\t"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("soon\tw1");
    }

    @Test
    void filesAreMergedByStampKeepingFileOrderForEqualStamps(@TempDir Path dir) throws IOException {
        Path first = dir.resolve("w1.history");
        Path second = dir.resolve("w2.history");
        Files.write(first, List.of(line("100 w1 ACQUIRED 1"), line("300 w1 RELEASED 1")), UTF_8);
        Files.write(second, List.of(line("200 w2 REQUEST 0"), line("300 w2 ACQUIRED 2")), UTF_8);

        List<HistoryEvent> events = HistoryChecker.read(first, second);

        assertThat(events).extracting(HistoryEvent::line).containsExactly(
                line("100 w1 ACQUIRED 1"),
                line("200 w2 REQUEST 0"),
                line("300 w1 RELEASED 1"),
                line("300 w2 ACQUIRED 2"));
        assertThat(HistoryChecker.check(events).untoldOverlaps()).isZero();
        assertThat(HistoryChecker.read(second, first)).extracting(HistoryEvent::line)
                .containsSubsequence(line("300 w2 ACQUIRED 2"), line("300 w1 RELEASED 1"));
    }
}
