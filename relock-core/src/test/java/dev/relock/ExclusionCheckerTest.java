package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.relock.ExclusionChecker.Event;
import dev.relock.ExclusionChecker.Kind;
import dev.relock.ExclusionChecker.Report;
import org.junit.jupiter.api.Test;

/** The checker the fault tests rely on finds what it should, and only that (no Redis needed). */
class ExclusionCheckerTest {

    private final ExclusionChecker checker = new ExclusionChecker();

    private void at(long nanos, Kind kind, String owner, long token) {
        checker.add(new Event(kind, "L", owner, token, nanos));
    }

    @Test
    void takingTurnsWithRisingTokensIsClean() {
        at(1, Kind.ENTER, "a", 10);
        at(2, Kind.WRITE, "a", 10);
        at(3, Kind.LEAVE, "a", 10);
        at(4, Kind.ENTER, "b", 11);
        at(5, Kind.WRITE, "b", 11);
        at(6, Kind.LEAVE, "b", 11);
        at(7, Kind.ENTER, "a", 12);
        at(8, Kind.LEAVE, "a", 12);
        Report report = checker.report();
        assertThat(report.violations()).isEmpty();
        assertThat(report.entries()).isEqualTo(3);
        assertThat(report.writesAccepted()).isEqualTo(2);
    }

    @Test
    void anOverlapIsCountedAndTheStaleWriteRefused() {
        at(1, Kind.ENTER, "a", 10);
        at(2, Kind.ENTER, "b", 11);
        at(3, Kind.WRITE, "b", 11);
        at(4, Kind.WRITE, "a", 10);
        at(5, Kind.LEAVE, "a", 10);
        at(6, Kind.LEAVE, "b", 11);
        Report report = checker.report();
        assertThat(report.overlaps()).isEqualTo(1);
        assertThat(report.tokenRegressions()).isZero();
        assertThat(report.writesAccepted()).isEqualTo(1);
        assertThat(report.writesRefused()).isEqualTo(1);
        assertThat(report.violations()).hasSize(2);
    }

    @Test
    void aTokenThatDoesNotRiseIsARegressionEvenWithoutOverlap() {
        at(1, Kind.ENTER, "a", 10);
        at(2, Kind.LEAVE, "a", 10);
        at(3, Kind.ENTER, "b", 10);
        at(4, Kind.LEAVE, "b", 10);
        assertThat(checker.report().tokenRegressions()).isEqualTo(1);
    }

    @Test
    void theSameOwnerMayEnterAgainWithTheSameTokenWhenNobodyElseHeldItBetween() {
        at(1, Kind.ENTER, "a", 10);
        at(2, Kind.LEAVE, "a", 10);
        at(3, Kind.ENTER, "a", 10);
        at(4, Kind.LEAVE, "a", 10);
        assertThat(checker.report().violations()).isEmpty();
        at(5, Kind.ENTER, "b", 11);
        at(6, Kind.LEAVE, "b", 11);
        at(7, Kind.ENTER, "a", 10);
        assertThat(checker.report().tokenRegressions()).isEqualTo(1);
    }

    @Test
    void eventsAreReplayedInStampOrderWhateverOrderTheyArrivedIn() {
        at(3, Kind.ENTER, "b", 11);
        at(1, Kind.ENTER, "a", 10);
        at(2, Kind.LEAVE, "a", 10);
        assertThat(checker.report().violations()).isEmpty();
    }

    @Test
    void linesFromOtherProcessesRoundTripAndOtherLinesAreIgnored() {
        assertThat(checker.add(ExclusionChecker.line(Kind.ENTER, "L", "child-1", 5))).isTrue();
        assertThat(checker.add("ACQUIRED 5")).isFalse();
        assertThat(checker.report().entries()).isEqualTo(1);
        assertThatThrownBy(() -> checker.add("EXCL ENTER L"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("EXCL ENTER L");
        assertThatThrownBy(() -> ExclusionChecker.line(Kind.ENTER, "a lock", "o", 1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("a lock");
    }

    @Test
    void liveWritesAnswerAsAFencedResourceWould() {
        assertThat(checker.write("L", "a", 10)).isTrue();
        assertThat(checker.write("L", "b", 11)).isTrue();
        assertThat(checker.write("L", "a", 10)).isFalse();
        assertThat(checker.write("L", "b", 11)).isTrue();
    }
}
