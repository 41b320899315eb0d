package dev.relock.internal.single;

import static org.assertj.core.api.Assertions.assertThat;

import dev.relock.LeaseLost;
import dev.relock.LeaseState;
import dev.relock.internal.engine.ClientOnAClock;
import dev.relock.internal.engine.EngineClient;
import dev.relock.internal.engine.HandMovedClock;
import dev.relock.internal.engine.Hold;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The lease keeper's report of a hold past its deadline is decided on the client's clock: a nanosecond before the
 * deadline it changes nothing, at the deadline the hold is lost and the listeners told, once.
 */
class LossReportsClockTest {

    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

    private final HandMovedClock clock = new HandMovedClock();
    private final List<LeaseLost> told = new ArrayList<>();
    private final EngineClient client = ClientOnAClock.of(clock, told::add);
    private final LossReports losses =
            new LossReports(client, new LocalLines(client.holds(), clock, clock), clock);

    @Test
    void aHoldIsLostExactlyWhenTheClientsClockReachesItsDeadline() {
        Hold hold = ClientOnAClock.writeHold(client, "deadline", client.ownerOfCurrentThread(), 1_000);
        client.holds().add(hold);

        clock.advance(1_000 * MS - 1);
        assertThat(losses.reportLostAtDeadline(hold, "ran out", Hold::leaseEndNanos)).as("1 ns before").isFalse();
        assertThat(hold.state()).isEqualTo(LeaseState.HELD);
        assertThat(told).isEmpty();

        clock.advance(1);
        assertThat(losses.reportLostAtDeadline(hold, "ran out", Hold::leaseEndNanos)).as("at the deadline").isTrue();
        assertThat(hold.state()).isEqualTo(LeaseState.LOST);
        assertThat(losses.reportLostAtDeadline(hold, "again", Hold::leaseEndNanos)).as("still lost").isTrue();
        assertThat(told).extracting(LeaseLost::reason).containsExactly("ran out");
    }

    @Test
    void anExtensionConfirmedBeforeTheReportMovesTheDeadline() {
        Hold hold = ClientOnAClock.writeHold(client, "extended", client.ownerOfCurrentThread(), 1_000);
        client.holds().add(hold);
        long sent = clock.nanoTime();
        clock.advance(500 * MS);
        assertThat(hold.leaseExtended(sent + 500 * MS, 1_000)).isTrue();

        clock.advance(1_000 * MS - 1);
        assertThat(losses.reportLostAtDeadline(hold, "ran out", Hold::leaseEndNanos)).as("1 ns before").isFalse();
        clock.advance(1);
        assertThat(losses.reportLostAtDeadline(hold, "ran out", Hold::leaseEndNanos)).as("at the new one").isTrue();
    }
}
