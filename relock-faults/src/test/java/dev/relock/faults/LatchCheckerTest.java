package dev.relock.faults;

import static dev.relock.faults.Histories.events;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class LatchCheckerTest {

    private static final long S = 1_000_000_000L;

    private static LatchChecker.LatchFindings check(String... spacedLines) {
        return LatchChecker.check(events(spacedLines));
    }

    @Test
    void aRoundThatOpensAfterItsCountDownsWakesItsWaiters() {
        LatchChecker.LatchFindings found = check(
                "100 coordinator ROUND_SET 1 2",
                "110 w1.2 LATCH_WAIT 1 2000",
                "120 w1.1 COUNT_SENT 1",
                "130 w1.1 COUNTED 1 1",
                "140 w2.1 COUNT_SENT 1",
                "150 w2.1 COUNTED 1 0",
                "160 w1.2 LATCH_OPEN 1");

        assertThat(found).isEqualTo(new LatchChecker.LatchFindings(1, 1, 1, 0, 0, 3));
        assertThat(found.clean()).isTrue();
    }

    @Test
    void roundsOfTwoLanesAtOnceAreJudgedEachByItsOwnCountDowns() {
        // lane 1's round 7 opens; lane 2's round 8, armed meanwhile, has one count-down of two and must not
        LatchChecker.LatchFindings found = check(
                "100 coordinator ROUND_SET 7 1",
                "101 coordinator ROUND_SET 8 2",
                "110 w1.2 LATCH_WAIT 7 2000",
                "111 w1.5 LATCH_WAIT 8 2000",
                "120 w1.1 COUNT_SENT 7",
                "121 w1.4 COUNT_SENT 8",
                "130 w1.1 COUNTED 7 0",
                "131 w1.4 COUNTED 8 1",
                "140 w1.2 LATCH_OPEN 7",
                "150 w1.5 LATCH_OPEN 8");

        assertThat(found).isEqualTo(new LatchChecker.LatchFindings(2, 1, 2, 1, 0, 4));
    }

    @Test
    void aWaiterWokenBeforeTheCountsWorthOfCountDownsWasSentSawItOpenEarly() {
        LatchChecker.LatchFindings found = check(
                "100 coordinator ROUND_SET 1 2",
                "110 w1.2 LATCH_WAIT 1 2000",
                "120 w1.1 COUNT_SENT 1",
                "130 w1.2 LATCH_OPEN 1",
                "140 w2.1 COUNT_SENT 1");

        assertThat(found.openedEarly()).isEqualTo(1);
        assertThat(found.clean()).isFalse();
    }

    @Test
    void aWaiterThatFindsTheRoundExpiredIsNotJudged() {
        LatchChecker.LatchFindings found = check(
                "100 coordinator ROUND_SET 1 4",
                (100 + 4 * S) + " w1.2 LATCH_WAIT 1 2000",
                (101 + 4 * S) + " w1.2 LATCH_OPEN 1");

        assertThat(found.openedEarly()).isZero();
    }

    @Test
    void aWaiterThatTimedOutLongAfterItsRoundOpenedMissedTheOpening() {
        LatchChecker.LatchFindings found = check(
                "100 coordinator ROUND_SET 1 1",
                "110 w1.2 LATCH_WAIT 1 2000",
                "120 w1.1 COUNT_SENT 1",
                "130 w1.1 COUNTED 1 0",
                (110 + 2 * S) + " w1.2 LATCH_TIMEOUT 1");

        assertThat(found.missedWakeups()).isEqualTo(1);
        assertThat(found.clean()).isFalse();
    }

    @Test
    void aTimeoutInARoundThatNeverOpenedOrOpenedNearTheDeadlineOrBesideAKillIsNoMiss() {
        LatchChecker.LatchFindings neverOpened = check(
                "100 coordinator ROUND_SET 1 2",
                "110 w1.2 LATCH_WAIT 1 2000",
                "120 w1.1 COUNT_SENT 1",
                "130 w1.1 COUNTED 1 1",
                (110 + 2 * S) + " w1.2 LATCH_TIMEOUT 1");
        LatchChecker.LatchFindings openedLate = check(
                "100 coordinator ROUND_SET 1 1",
                "110 w1.2 LATCH_WAIT 1 2000",
                (110 + S + S / 2) + " w1.1 COUNT_SENT 1",
                (110 + S + S / 2) + " w1.1 COUNTED 1 0",
                (110 + 2 * S) + " w1.2 LATCH_TIMEOUT 1");
        LatchChecker.LatchFindings besideAKill = check(
                "100 coordinator ROUND_SET 1 1",
                "110 w1.2 LATCH_WAIT 1 2000",
                "120 w1.1 COUNT_SENT 1",
                "130 w1.1 COUNTED 1 0",
                "140 campaign KILLED 0 w2",
                (110 + 2 * S) + " w1.2 LATCH_TIMEOUT 1");
        // a count-down left 0 before the count's worth was sent: the round was gone (expired), not opened
        LatchChecker.LatchFindings goneNotOpened = check(
                "100 coordinator ROUND_SET 1 2",
                "110 w1.2 LATCH_WAIT 1 2000",
                "120 w1.1 COUNT_SENT 1",
                "130 w1.1 COUNTED 1 0",
                (110 + 2 * S) + " w1.2 LATCH_TIMEOUT 1");

        assertThat(neverOpened.missedWakeups()).isZero();
        assertThat(openedLate.missedWakeups()).isZero();
        assertThat(besideAKill.missedWakeups()).isZero();
        assertThat(goneNotOpened.missedWakeups()).isZero();
        assertThat(goneNotOpened.opened()).isZero();
    }
}
