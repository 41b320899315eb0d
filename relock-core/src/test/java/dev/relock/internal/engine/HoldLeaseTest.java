package dev.relock.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.relock.LeaseState;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A hold's lease as the client counts it, without Redis: confirmations of renewals and extensions, which may be
 * counted in any order, only ever move the end later; the lease asked of renewals never shrinks; and a loss at
 * the deadline and an extension counted at the same moment decide one way.
 */
class HoldLeaseTest {

    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final long T0 = 1_000_000 * MS;

    private static Hold hold(long leaseMillis, boolean renewed) {
        return new Hold("name", LockKeys.of("test", "name"), LockMode.WRITE, "owner", 1, leaseMillis, renewed, T0);
    }

    @Test
    void anExtensionMovesTheEndAndRaisesTheRenewalsLeaseButNeverShortensEither() {
        Hold hold = hold(1_000, true);

        assertThat(hold.leaseExtended(T0 + 100 * MS, 5_000)).isTrue();
        assertThat(hold.leaseEndNanos()).isEqualTo(T0 + 5_100 * MS);
        assertThat(hold.leaseMillis()).as("what renewals ask for from now on").isEqualTo(5_000);

        assertThat(hold.leaseExtended(T0 + 200 * MS, 100)).isTrue();
        assertThat(hold.leaseEndNanos()).as("a shorter extension changes nothing").isEqualTo(T0 + 5_100 * MS);
        assertThat(hold.leaseMillis()).isEqualTo(5_000);
    }

    @Test
    void aRenewalSentBeforeAnExtensionAndCountedAfterItKeepsTheLongerEndAndLease() {
        Hold hold = hold(1_000, true);
        assertThat(hold.leaseExtended(T0 + 300 * MS, 5_000)).isTrue();

        // asked for 1 s when it was sent, a little later than the extension
        hold.leaseRenewed(T0 + 400 * MS, 1_000);

        assertThat(hold.leaseEndNanos()).isEqualTo(T0 + 5_300 * MS);
        assertThat(hold.leaseMillis()).isEqualTo(5_000);
        // a renewal that proves a later end moves it there, and the lease stays the longer one
        hold.leaseRenewed(T0 + 600 * MS, 5_000);
        assertThat(hold.leaseEndNanos()).isEqualTo(T0 + 5_600 * MS);
        assertThat(hold.leaseMillis()).isEqualTo(5_000);
    }

    @Test
    void anExplicitLeaseProvedByAShorterExtensionKeepsTheLongerLeaseForItsDrift() {
        Hold hold = hold(10_000, false);

        // 9.5 s in, 1 s more: the end moves 0.5 s; the lease stays 10 s, so the drift taken off it is the larger
        assertThat(hold.leaseExtended(T0 + 9_500 * MS, 1_000)).isTrue();

        assertThat(hold.leaseEndNanos()).isEqualTo(T0 + 10_500 * MS);
        assertThat(hold.leaseMillis()).isEqualTo(10_000);
        assertThat(hold.renewed()).as("an explicit lease stays explicit").isFalse();
    }

    @Test
    void aLossAtTheDeadlineAndAnExtensionDecideOneWay() {
        Hold extendedFirst = hold(1_000, false);
        assertThat(extendedFirst.leaseExtended(T0 + 900 * MS, 3_000)).isTrue();
        assertThat(extendedFirst.loseAtDeadline(T0 + 1_000 * MS, Hold::leaseEndNanos, "ran out"))
                .as("the deadline moved").isFalse();
        assertThat(extendedFirst.state()).isEqualTo(LeaseState.HELD);

        Hold lostFirst = hold(1_000, false);
        assertThat(lostFirst.loseAtDeadline(T0 + 1_000 * MS, Hold::leaseEndNanos, "ran out")).isTrue();
        assertThat(lostFirst.leaseExtended(T0 + 900 * MS, 3_000)).as("an extension counted after the loss").isFalse();
        assertThat(lostFirst.state()).isEqualTo(LeaseState.LOST);
        assertThat(lostFirst.lostReason()).isEqualTo("ran out");
        assertThat(lostFirst.leaseEndNanos()).isEqualTo(T0 + 1_000 * MS);
        assertThat(lostFirst.whenLost().toCompletableFuture()).isCompleted();
        assertThat(lostFirst.loseAtDeadline(T0 + 2_000 * MS, Hold::leaseEndNanos, "again")).as("told once").isFalse();
    }
}
