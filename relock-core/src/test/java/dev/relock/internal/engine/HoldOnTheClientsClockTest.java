package dev.relock.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.relock.HeldLock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * What a client says of its holds follows its ticker, not the JVM's clock: whether a thread still holds a lock whose
 * explicit lease ran out before the lease keeper looked, and the lease left and the time held that
 * {@code heldLocks()} shows. The clock is moved by hand to just before and just after each edge.
 */
class HoldOnTheClientsClockTest {

    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

    private final HandMovedClock clock = new HandMovedClock();
    private final EngineClient client = ClientOnAClock.of(clock);

    @Test
    void aThreadHoldsTheLockUntilTheClientsClockReachesTheLeaseEnd() {
        Hold hold = ClientOnAClock.writeHold(client, "explicit", client.ownerOfCurrentThread(), 1_000);
        client.holds().add(hold);
        EngineLock lock = new EngineLock(client, "explicit", hold.keys, LockMode.WRITE);

        clock.advance(1_000 * MS - 1);
        assertThat(lock.isHeldByCurrentThread()).as("1 ns before the lease end").isTrue();
        assertThat(lock.isHeldByThread(Thread.currentThread().getId())).isTrue();

        clock.advance(1);
        assertThat(lock.isHeldByCurrentThread()).as("at the lease end").isFalse();
        assertThat(lock.isHeldByThread(Thread.currentThread().getId())).isFalse();
    }

    @Test
    void heldLocksShowTheLeaseLeftAndTheTimeHeldByTheClientsClock() {
        Hold hold = ClientOnAClock.writeHold(client, "shown", client.ownerOfCurrentThread(), 1_000);
        client.holds().add(hold);

        clock.advance(400 * MS);
        Instant before = Instant.now();
        HeldLock shown = client.heldLocks().get(0);
        Instant after = Instant.now();

        assertThat(shown.remainingLease()).isEqualTo(Duration.ofMillis(600));
        assertThat(shown.heldSince()).as("400 ms before the wall clock read")
                .isBetween(before.minusMillis(400).truncatedTo(ChronoUnit.MILLIS), after.minusMillis(400));

        clock.advance(600 * MS);
        assertThat(client.heldLocks().get(0).remainingLease()).as("at the lease end").isZero();
    }

    @Test
    void aHoldIsHeldSinceItJoinedTheTableByTheClientsClock() {
        Hold hold = ClientOnAClock.writeHold(client, "joined", client.ownerOfCurrentThread(), 30_000);
        clock.advance(250 * MS);
        client.holds().add(hold);

        clock.advance(100 * MS - 1);
        assertThat(hold.heldMillis(clock.nanoTime())).isEqualTo(99);
        clock.advance(1);
        assertThat(hold.heldMillis(clock.nanoTime())).isEqualTo(100);
    }
}
