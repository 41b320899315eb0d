package dev.relock.internal.single;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * When a single-server acquisition tries next and when its wait is over, checked by moving a hand-driven clock: the
 * deadline is never passed, the back-off doubles and is cut to the deadline, a check asked for comes first.
 */
class WaitPlanTest {

    // near the wrap: times are compared by difference, as System.nanoTime() values are
    private long now = Long.MAX_VALUE - TimeUnit.SECONDS.toNanos(1);
    private final WaitPlan plan = new WaitPlan(() -> now);

    @Test
    void theWaitIsOverAtItsDeadlineAndNotBefore() {
        plan.begin(false, now + ms(100));
        now += ms(100) - 1;
        assertThat(plan.isOver()).as("a nanosecond before the deadline").isFalse();
        now += 1;
        assertThat(plan.isOver()).as("at the deadline").isTrue();
    }

    @Test
    void aWaitWithoutADeadlineIsNeverOver() {
        plan.begin(true, now);
        now += TimeUnit.DAYS.toNanos(400);
        assertThat(plan.isOver()).isFalse();
        assertThat(plan.byDeadline(now + ms(5))).isEqualTo(now + ms(5));
    }

    @Test
    void noPlannedTimeIsAfterTheDeadline() {
        long deadline = now + ms(100);
        plan.begin(false, deadline);
        assertThat(plan.byDeadline(now + ms(99))).isEqualTo(now + ms(99));
        assertThat(plan.byDeadline(now + ms(101))).isEqualTo(deadline);
        assertThat(plan.afterLease(now, 50)).as("just after the holder's lease").isEqualTo(now + ms(51));
        assertThat(plan.afterLease(now, 200)).as("a lease that ends after the deadline").isEqualTo(deadline);
    }

    @Test
    void theBackOffDoublesUpToTwoSecondsAndStartsOverAfterANotAcquired() {
        plan.begin(true, now);
        List<Long> waits = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            waits.add(TimeUnit.NANOSECONDS.toMillis(plan.afterBackoff() - now));
        }
        assertThat(waits).containsExactly(50L, 100L, 200L, 400L, 800L, 1_600L, 2_000L, 2_000L);
        plan.afterLease(now, 10);
        assertThat(plan.afterBackoff() - now).isEqualTo(ms(50));
    }

    @Test
    void theBackOffIsCutToTheDeadline() {
        long deadline = now + ms(120);
        plan.begin(false, deadline);
        assertThat(plan.afterBackoff()).isEqualTo(now + ms(50));
        assertThat(plan.afterBackoff()).isEqualTo(now + ms(100));
        assertThat(plan.afterBackoff()).as("the third back-off, 200 ms").isEqualTo(deadline);
        assertThat(plan.backoffNanos()).isEqualTo(ms(200));
    }

    @Test
    void theScriptIsToldTheWaitLeftInMsRoundedUp() {
        plan.begin(false, now + TimeUnit.MICROSECONDS.toNanos(1_500));
        assertThat(plan.scriptWaitMillis(false)).as("a single try").isZero();
        assertThat(plan.scriptWaitMillis(true)).isEqualTo(2);
        now += ms(5);
        assertThat(plan.scriptWaitMillis(true)).as("past the deadline").isEqualTo(1);
        WaitPlan forever = new WaitPlan(() -> now);
        forever.begin(true, now);
        assertThat(forever.scriptWaitMillis(true)).isEqualTo(ModeScripts.WAIT_FOREVER_MILLIS);
    }

    @Test
    void theEarliestCheckAskedForComesFirstUntilTheNextAttempt() {
        plan.begin(true, now);
        assertThat(plan.checkBefore(now + ms(1_000))).as("before any check is asked for").isFalse();
        assertThat(plan.checkWithin(ms(30))).isEqualTo(now + ms(30));
        plan.checkWithin(ms(50));
        assertThat(plan.checkBy()).as("the earliest check kept").isEqualTo(now + ms(30));
        assertThat(plan.checkBefore(now + ms(31))).isTrue();
        assertThat(plan.checkBefore(now + ms(30))).isFalse();
        plan.attempted();
        assertThat(plan.checkBefore(now + ms(1_000))).as("after the next attempt").isFalse();
    }

    @Test
    void onlyTheLatestTimerIsWanted() {
        long first = plan.nextGeneration();
        long second = plan.nextGeneration();
        assertThat(plan.isCurrent(first)).isFalse();
        assertThat(plan.isCurrent(second)).isTrue();
    }

    private static long ms(long millis) {
        return TimeUnit.MILLISECONDS.toNanos(millis);
    }
}
