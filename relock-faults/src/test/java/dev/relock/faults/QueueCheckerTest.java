package dev.relock.faults;

import static dev.relock.faults.Histories.events;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class QueueCheckerTest {

    private static final long S = 1_000_000_000L;

    private static QueueChecker.QueueFindings check(String... spacedLines) {
        return QueueChecker.check(events(spacedLines));
    }

    @Test
    void itemsTakenOnceOrDrainedAreClean() {
        QueueChecker.QueueFindings found = check(
                "100 w1.1 PRODUCED 1 w1.1-1",
                "110 w1.1 SIGNALLED 1 w1.1-1",
                "120 w1.1 PRODUCED 1 w1.1-2",
                "200 w2.2 CONSUMING 2 w1.1-1",
                "210 w2.2 CONSUMED 2 w1.1-1",
                "300 campaign DRAINED 0 w1.1-2");

        assertThat(found).isEqualTo(new QueueChecker.QueueFindings(2, 1, 0, 0, 0));
        assertThat(found.clean()).isTrue();
    }

    @Test
    void anItemNeitherTakenNorDrainedIsLost() {
        QueueChecker.QueueFindings found = check(
                "100 w1.1 PRODUCED 1 w1.1-1",
                "120 w1.1 PRODUCED 1 w1.1-2",
                "200 w2.2 CONSUMING 2 w1.1-1",
                "210 w2.2 CONSUMED 2 w1.1-1");

        assertThat(found.lost()).isEqualTo(1);
        assertThat(found.clean()).isFalse();
    }

    @Test
    void twoConsumersThatReadTheSameHeadTakeItTwiceAndLoseTheNext() {
        QueueChecker.QueueFindings found = check(
                "100 w1.1 PRODUCED 1 a",
                "110 w1.1 PRODUCED 1 b",
                "200 w2.2 CONSUMING 2 a",
                "201 w3.2 CONSUMING 3 a",
                "210 w2.2 CONSUMED 2 a",
                "211 w3.2 CONSUMED 3 b");

        assertThat(found.duplicated()).isEqualTo(1);
        assertThat(found.lost()).isEqualTo(1);
    }

    @Test
    void anItemTakenAndAlsoDrainedIsDuplicated() {
        QueueChecker.QueueFindings found = check(
                "100 w1.1 PRODUCED 1 a",
                "200 w2.2 CONSUMING 2 a",
                "210 w2.2 CONSUMED 2 a",
                "300 campaign DRAINED 0 a");

        assertThat(found.duplicated()).isEqualTo(1);
    }

    @Test
    void anItemWhoseConsumerDiedBetweenReadingAndRemovingIsInDoubtNeitherLostNorTakenTwice() {
        QueueChecker.QueueFindings found = check(
                "100 w1.1 PRODUCED 1 a",
                "110 w1.1 PRODUCED 1 b",
                "200 w2.2 CONSUMING 2 a",
                "250 campaign KILLED 0 w2",
                "300 w3.2 CONSUMING 3 a",
                "310 w3.2 CONSUMED 3 a",
                "320 w3.2 ERROR 3 resource",
                "400 w3.2 CONSUMING 4 b",
                "410 w3.2 ERROR 4 resource");

        assertThat(found.lost()).isZero();
        assertThat(found.duplicated()).isZero();
        assertThat(found.taken()).isEqualTo(1);
    }

    @Test
    void anItemLeftUntakenPastGraceWhileAConsumerAwaitedIsALostSignal() {
        QueueChecker.QueueFindings found = check(
                "100 w2.2 AWAIT_START 1 10000",
                "200 w1.1 ACQUIRED 2 campaign",
                "210 w1.1 PRODUCED 2 a",
                "220 w1.1 SIGNALLED 2 a",
                (220 + 5 * S) + " w2.2 AWAIT_END 0 timed out",
                (221 + 5 * S) + " w2.2 CONSUMING 3 a",
                (222 + 5 * S) + " w2.2 CONSUMED 3 a");

        assertThat(found.lostSignals()).isEqualTo(1);
        assertThat(found.clean()).isFalse();
    }

    @Test
    void anItemTakenWithinGraceIsNoLostSignal() {
        QueueChecker.QueueFindings found = check(
                "100 w2.2 AWAIT_START 1 10000",
                "110 w3.2 AWAIT_START 2 10000",
                "210 w1.1 PRODUCED 3 a",
                "220 w1.1 SIGNALLED 3 a",
                (220 + S) + " w3.2 AWAIT_END 0 signalled",
                (221 + S) + " w3.2 CONSUMING 4 a",
                (222 + S) + " w3.2 CONSUMED 4 a",
                (220 + 5 * S) + " w2.2 AWAIT_END 0 timed out");

        assertThat(found.lostSignals()).isZero();
    }

    @Test
    void anItemProducedBeforeTheConsumerAwaitedOrNearAKillOrAtTheEndIsNotJudged() {
        QueueChecker.QueueFindings beforeTheAwait = check(
                "210 w1.1 PRODUCED 3 a",
                "220 w1.1 SIGNALLED 3 a",
                "300 w2.2 AWAIT_START 1 10000",
                (220 + 5 * S) + " w2.2 AWAIT_END 0 timed out");
        QueueChecker.QueueFindings nearAKill = check(
                "100 w2.2 AWAIT_START 1 10000",
                "150 campaign KILLED 0 w3",
                "210 w1.1 PRODUCED 3 a",
                "220 w1.1 SIGNALLED 3 a",
                (220 + 5 * S) + " w2.2 AWAIT_END 0 timed out");
        QueueChecker.QueueFindings nearTheEnd = check(
                "100 w2.2 AWAIT_START 1 10000",
                "210 w1.1 PRODUCED 3 a",
                "220 w1.1 SIGNALLED 3 a",
                (220 + S) + " campaign DRAINED 0 a");

        assertThat(beforeTheAwait.lostSignals()).isZero();
        assertThat(nearAKill.lostSignals()).isZero();
        assertThat(nearTheEnd.lostSignals()).isZero();
    }

    @Test
    void theSummaryNamesTheQueueOnlyWhereItemsWereProduced() {
        assertThat(Histories.check("100 w1.1 PRODUCED 1 a").summary()).contains("queue: 1 produced, 0 taken, 1 lost");
        assertThat(Histories.check("100 w1 ACQUIRED 1").summary()).doesNotContain("queue");
    }
}
