package dev.relock.internal.redlock;

import static org.assertj.core.api.Assertions.assertThat;

import dev.relock.internal.engine.HandMovedClock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** When a Redlock acquisition's next attempt goes out, read on a hand-moved ticker, without Redis. */
class WaitPlanTest {

    private final HandMovedClock ticker = new HandMovedClock();
    // draws the largest value below each bound, so a back-off shows its bound
    private final WaitPlan plan = new WaitPlan(ticker, bound -> bound - 1);

    @Test
    void aSplitsBackOffDoublesWithEachSplitInARowUpTo200MillisAndStartsOverOnceAHolderIsFound() {
        List<Long> bounds = new ArrayList<>();
        for (int split = 0; split < 7; split++) {
            bounds.add(TimeUnit.NANOSECONDS.toMillis(plan.afterSplit() - ticker.nanoTime() + 1));
        }
        assertThat(bounds).containsExactly(10L, 20L, 40L, 80L, 160L, 200L, 200L);

        plan.holderFound();
        assertThat(plan.afterSplit() - ticker.nanoTime()).isEqualTo(TimeUnit.MILLISECONDS.toNanos(10) - 1);
    }

    @Test
    void anUnavailableBackOffDoublesFrom50MillisUpTo2SecondsAndStartsOverOnceAMajorityAnswered() {
        List<Long> backOffs = new ArrayList<>();
        for (int attempt = 0; attempt < 7; attempt++) {
            long at = plan.afterUnavailable();
            backOffs.add(TimeUnit.NANOSECONDS.toMillis(at - ticker.nanoTime()));
            assertThat(plan.unavailableBackoffNanos()).isEqualTo(at - ticker.nanoTime());
        }
        assertThat(backOffs).containsExactly(50L, 100L, 200L, 400L, 800L, 1600L, 2000L);

        plan.answered();
        assertThat(plan.unavailableBackoffNanos()).isZero();
        assertThat(plan.afterUnavailable() - ticker.nanoTime()).isEqualTo(TimeUnit.MILLISECONDS.toNanos(50));
    }

    @Test
    void theWaitsRunFromNowOnTheTicker() {
        long turn = TimeUnit.MILLISECONDS.toNanos(300);
        long before = plan.afterTurn(turn);
        ticker.advanceMillis(1_000);
        assertThat(plan.afterTurn(turn) - before).isEqualTo(TimeUnit.MILLISECONDS.toNanos(1_000));
        assertThat(plan.afterTurn(turn) - ticker.nanoTime()).isEqualTo(turn + WaitPlan.JITTER_NANOS - 1);
        assertThat(plan.afterJitter() - ticker.nanoTime()).isEqualTo(WaitPlan.JITTER_NANOS - 1);
        assertThat(plan.in(42) - ticker.nanoTime()).isEqualTo(42);
    }

    @Test
    void aWaitEndsWithinATurnOnlyUntilTheClockLeavesLessThanTheTurnAndAJitterBeforeIt() {
        long turn = TimeUnit.MILLISECONDS.toNanos(300);
        long at = ticker.nanoTime() + turn + WaitPlan.JITTER_NANOS + TimeUnit.MILLISECONDS.toNanos(100);

        assertThat(plan.endsWithinTurn(at, turn)).isFalse();
        ticker.advance(TimeUnit.MILLISECONDS.toNanos(100) - 1);
        assertThat(plan.endsWithinTurn(at, turn)).as("1 ns before").isFalse();
        ticker.advance(1);
        assertThat(plan.endsWithinTurn(at, turn)).isTrue();
    }

    @Test
    void theDefaultPlanDrawsItsBackOffsBelowTheirBounds() {
        WaitPlan drawn = WaitPlan.of(ticker);
        for (int i = 0; i < 100; i++) {
            long backOff = drawn.afterSplit() - ticker.nanoTime();
            assertThat(backOff).isBetween(0L, TimeUnit.MILLISECONDS.toNanos(200) - 1);
            long jitter = drawn.afterJitter() - ticker.nanoTime();
            assertThat(jitter).isBetween(0L, WaitPlan.JITTER_NANOS - 1);
        }
    }
}
