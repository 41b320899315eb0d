package dev.relock.faults;

import static dev.relock.faults.Histories.check;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** {@link HistoryChecker} on the histories of the workloads beside the single-threaded exclusive lock. */
class HistoryCheckerWorkloadsTest {

    @Test
    void threadsOfOneProcessExcludeEachOtherLikeProcesses() {
        Findings findings = check(
                "100 w1.1 ACQUIRED 1 campaign",
                "200 w1.2 ACQUIRED 2 campaign",
                "300 w1.1 RELEASING 1",
                "400 w1.2 RELEASING 2");

        assertThat(findings.criticalSections()).isEqualTo(2);
        assertThat(findings.untoldOverlaps()).isEqualTo(1);
    }

    @Test
    void aKillEndsTheSectionsOfEveryThreadOfItsProcessAndOfNoOther() {
        Findings findings = check(
                "100 w1.2 ACQUIRED 1 campaign",
                "110 w1.1 ACQUIRED 2 other",
                "150 w1.3 REQUEST 0 campaign",
                "200 campaign KILLED 0 w1",
                "300 w2.1 ACQUIRED 3 campaign",
                "310 w3.1 ACQUIRED 4 other",
                "400 w2.1 RELEASING 3",
                "400 w3.1 RELEASING 4",
                "500 w1.2 RELEASING 1",
                "500 w1.1 RELEASING 2");

        // the stamps of a killed process's threads that come after its KILLED are none of the checker's concern
        assertThat(findings.untoldOverlaps()).isZero();
        assertThat(findings.maxUnavailableNanos()).isZero(); // w1.3 waited only while w1.2 held the lock

        Findings otherProcess = check(
                "100 w1.2 ACQUIRED 1 campaign",
                "200 campaign KILLED 0 w10",
                "300 w2.1 ACQUIRED 2 campaign",
                "400 w1.2 RELEASING 1");

        assertThat(otherProcess.untoldOverlaps()).isEqualTo(1);
    }

    @Test
    void readersShareTheLockAndAWriterBesideAReaderOverlaps() {
        Findings readers = check(
                "100 w1.1 ACQUIRED 1 campaign read",
                "150 w2.1 ACQUIRED 2 campaign read",
                "200 w1.1 RELEASING 1",
                "250 w2.1 RELEASING 2");

        assertThat(readers.untoldOverlaps()).isZero();
        assertThat(readers.toldOverlaps()).isZero();

        Findings writerAfterReader = check(
                "100 w1.1 ACQUIRED 1 campaign read",
                "150 w2.1 ACQUIRED 2 campaign",
                "200 w1.1 RELEASING 1");
        Findings readerAfterWriter = check(
                "100 w1.1 ACQUIRED 1 campaign",
                "150 w2.1 ACQUIRED 2 campaign read",
                "200 w1.1 RELEASING 1");

        assertThat(writerAfterReader.untoldOverlaps()).isEqualTo(1);
        assertThat(readerAfterWriter.untoldOverlaps()).isEqualTo(1);
    }

    @Test
    void aReaderThatGotInWhileAWriterWhoAskedFirstWaitedIsCountedNotFailed() {
        Findings findings = check(
                "100 w1.1 ACQUIRED 1 campaign read",
                "110 w2.1 REQUEST 0 campaign",
                "120 w3.1 REQUEST 0 campaign read",
                "130 w3.1 ACQUIRED 2 campaign read",
                "140 w1.1 RELEASING 1",
                "145 w3.1 RELEASING 2",
                "150 w2.1 ACQUIRED 3 campaign",
                "160 w2.1 RELEASING 3",
                "170 w1.1 REQUEST 0 campaign read",
                "180 w1.1 ACQUIRED 4 campaign read");

        assertThat(findings.readersPastAWaitingWriter()).isEqualTo(1);
        assertThat(findings.untoldOverlaps()).isZero();
        assertThat(findings.summary()).contains("1 readers past a waiting writer");
    }

    @Test
    void permitsOverlapOnlyBeyondTheSemaphoresCount() {
        Findings withinCount = check(
                "100 w1.1 ACQUIRED 1 sem permit 2",
                "110 w2.1 ACQUIRED 2 sem permit 2",
                "200 w1.1 RELEASING 1",
                "210 w3.1 ACQUIRED 3 sem permit 2");

        assertThat(withinCount.untoldOverlaps()).isZero();

        Findings beyond = check(
                "100 w1.1 ACQUIRED 1 sem permit 2",
                "110 w2.1 ACQUIRED 2 sem permit 2",
                "120 w3.1 ACQUIRED 3 sem permit 2",
                "200 w1.1 RELEASING 1",
                "200 w2.1 RELEASING 2");

        assertThat(beyond.untoldOverlaps()).isEqualTo(1);
    }

    @Test
    void aPermitBeyondTheCountBesideAHolderToldOfItsLossIsTold() {
        Findings findings = check(
                "100 w1.1 ACQUIRED 1 sem permit 2",
                "110 w2.1 ACQUIRED 2 sem permit 2",
                "115 w1.1 LOST 1",
                "120 w3.1 ACQUIRED 3 sem permit 2",
                "200 w1.1 RELEASE_LOST 1",
                "200 w2.1 RELEASING 2");

        assertThat(findings.untoldOverlaps()).isZero();
        assertThat(findings.toldOverlaps()).isEqualTo(1);
        assertThat(findings.lostNoticesBeforeOverlap()).isEqualTo(1);
    }

    @Test
    void aPermitHeldPastItsHoldersDeathLeavesTheWaitersShortOfTheCount() {
        Findings findings = check(
                "100 w1.1 ACQUIRED 1 sem permit 2",
                "110 w2.1 ACQUIRED 2 sem permit 2",
                "120 w3.1 REQUEST 0 sem permit 2",
                "130 w2.1 RELEASING 2",
                "630 w3.1 ACQUIRED 3 sem permit 2",
                "700 w1.1 RELEASING 1");

        // w3 waited 500 with one permit of two free: the other (w1's) stayed out
        assertThat(findings.maxUnavailableNanos()).isEqualTo(500);
    }

    @Test
    void eachMemberOfAMultiLockIsExcludedOnItsOwn() {
        Findings otherMember = check(
                "100 w1.1 ACQUIRED 1 a",
                "100 w1.1 ACQUIRED 2 b",
                "150 w2.1 ACQUIRED 3 c",
                "200 w1.1 RELEASING 0");

        assertThat(otherMember.criticalSections()).isEqualTo(3);
        assertThat(otherMember.untoldOverlaps()).isZero();

        Findings sharedMember = check(
                "100 w1.1 ACQUIRED 1 a",
                "100 w1.1 ACQUIRED 2 b",
                "150 w2.1 ACQUIRED 3 b",
                "150 w2.1 ACQUIRED 4 c",
                "200 w1.1 RELEASING 0");

        assertThat(sharedMember.untoldOverlaps()).isEqualTo(1);
    }

    @Test
    void eachRegisterIsJudgedOnItsOwn() {
        Findings findings = check(
                "100 w1.1 WRITE_SENT 9 register:a",
                "110 w1.1 WRITE_OK 9",
                "200 w2.1 WRITE_SENT 3 register:b",
                "210 w2.1 WRITE_OK 3",
                "300 w3.1 WRITE_SENT 5 register:a",
                "310 w3.1 WRITE_OK 5");

        assertThat(findings.staleWritesAccepted()).isEqualTo(1); // w3's token 5 after w1's 9 on register a
    }

    @Test
    void aConsumersAwaitEndsItsSectionAndTheReacquisitionOpensANewOne() {
        Findings findings = check(
                "100 w1.2 ACQUIRED 1 campaign",
                "110 w1.2 AWAIT_START 1 10000",
                "120 w2.1 ACQUIRED 2 campaign",
                "130 w2.1 RELEASING 2",
                "140 w1.2 AWAIT_END 0 signalled",
                "140 w1.2 ACQUIRED 3 campaign",
                "150 w3.1 ACQUIRED 4 campaign",
                "160 w1.2 RELEASING 3",
                "170 w3.1 RELEASING 4");

        assertThat(findings.criticalSections()).isEqualTo(4);
        assertThat(findings.untoldOverlaps()).isEqualTo(1); // w3 beside w1's second hold, not its first
    }

    @Test
    void aDetailThatNamesNoClaimFailsNamingIt() {
        assertThatThrownBy(() -> check("100 w1 ACQUIRED 1 campaign write"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'campaign write'");
        assertThatThrownBy(() -> check("100 w1 ACQUIRED 1 sem permit many"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'sem permit many'");
        assertThat(Claim.parse(Claim.permit("sem", 3).detail())).isEqualTo(Claim.permit("sem", 3));
        assertThat(Claim.parse("")).isEqualTo(Claim.exclusive(FaultWorker.LOCK));
    }
}
