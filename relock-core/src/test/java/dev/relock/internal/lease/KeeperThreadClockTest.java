package dev.relock.internal.lease;

import static org.assertj.core.api.Assertions.assertThat;

import dev.relock.internal.engine.ClientOnAClock;
import dev.relock.internal.engine.EngineClient;
import dev.relock.internal.engine.HandMovedClock;
import dev.relock.internal.engine.Hold;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A client's keeper thread reads the client's ticker: its "now" is the ticker's, and a hold whose deadline has passed
 * on the ticker (its lease still half an hour long by the JVM's clock) is reported at once.
 */
class KeeperThreadClockTest {

    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

    private final HandMovedClock clock = new HandMovedClock();
    private final EngineClient client = ClientOnAClock.of(clock);

    @Test
    void theKeeperThreadsNowIsTheClientsTicker() {
        KeeperThread thread = new KeeperThread("relock-test-keeper", client.clientId(), clock);
        try {
            assertThat(thread.nanoTime()).isEqualTo(clock.nanoTime());
            clock.advance(5_000 * MS);
            assertThat(thread.nanoTime()).isEqualTo(clock.nanoTime());
        } finally {
            thread.shutdown();
        }
    }

    @Test
    void aHoldPastItsDeadlineOnTheTickerIsReportedAtOnce() {
        Hold hold = ClientOnAClock.writeHold(client, "past", client.ownerOfCurrentThread(), 1_800_000);
        client.holds().add(hold);
        CompletableFuture<Long> reportedAt = new CompletableFuture<>();
        LeaseKeeper.Renewal renewal = new LeaseKeeper.Renewal() {
            @Override
            public int batchOf(Hold held) {
                return 0;
            }

            @Override
            public long deadlineOf(Hold held) {
                return held.leaseEndNanos();
            }

            @Override
            public void deadlinePassed(Hold held) {
                reportedAt.complete(clock.nanoTime());
            }

            @Override
            public void send(List<Hold> batch, Executor keeperThread) {
            }
        };
        clock.advance(1_800_000 * MS);
        // a pass an hour away: only the check that watch arms can report it
        try (LeaseKeeper keeper = LeaseKeeper.start("relock-test-keeper", client.clientId(), client.holds(), renewal,
                3_600_000, clock)) {
            keeper.watch(hold);
            assertThat(reportedAt).succeedsWithin(Duration.ofSeconds(10)).isEqualTo(hold.leaseEndNanos());
        }
    }
}
