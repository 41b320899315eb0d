package dev.relock.internal.lease;

import static org.assertj.core.api.Assertions.assertThat;

import dev.relock.internal.engine.Engine;
import dev.relock.internal.engine.Hold;
import dev.relock.internal.engine.HoldTable;
import dev.relock.internal.engine.LockKeys;
import dev.relock.internal.engine.LockMode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The lease keeper's schedule and deadlines, without Redis and without waiting: a hand-driven clock
 * ({@link HandDrivenScheduler}) and a renewal step the test answers for the engine.
 */
class LeaseKeeperTest {

    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final long LEASE_MILLIS = 3_000;
    private static final long PERIOD_MILLIS = LEASE_MILLIS / 3;
    private static final long DRIFT = 100 * MS;

    private final HandDrivenScheduler clock = new HandDrivenScheduler();
    private final HoldTable holds = new HoldTable(clock::nanoTime);
    private final Engine engine = new Engine();
    private final LeaseKeeper keeper = new LeaseKeeper(holds, engine, clock, PERIOD_MILLIS);

    /** The renewal step of a made-up engine: records what it is asked; confirms when told to. */
    private final class Engine implements LeaseKeeper.Renewal {
        final List<List<Hold>> sent = new ArrayList<>();
        final Map<Hold, Long> lostAt = new HashMap<>();
        boolean confirm;
        int failuresToThrow;

        @Override
        public int batchOf(Hold hold) {
            return hold.lockName.startsWith("seven") ? 7 : 0;
        }

        @Override
        public long deadlineOf(Hold hold) {
            return hold.leaseEndNanos() - DRIFT;
        }

        @Override
        public void deadlinePassed(Hold hold) {
            if (hold.lose("deadline")) {
                lostAt.put(hold, clock.nanoTime());
            }
        }

        @Override
        public void send(List<Hold> batch, Executor keeperThread) {
            if (failuresToThrow > 0) {
                failuresToThrow--;
                throw new IllegalStateException("a pass that fails");
            }
            sent.add(batch);
            long sentAt = clock.nanoTime();
            if (confirm) {
                // the reply, handled on the keeper thread as an engine's is
                keeperThread.execute(() -> batch.forEach(hold -> hold.leaseRenewed(sentAt, hold.leaseMillis())));
            }
        }
    }

    @AfterEach
    void close() {
        keeper.close();
    }

    private Hold held(String name, long leaseMillis, boolean renewed) {
        Hold hold = new Hold(name, LockKeys.of("test", name), LockMode.WRITE, "owner", 1, leaseMillis, renewed,
                clock.nanoTime());
        holds.add(hold);
        keeper.watch(hold);
        return hold;
    }

    @Test
    void aHoldWhoseRenewalsAreNeverConfirmedIsReportedLostAtItsDeadlineNotAtTheNextPass() {
        long start = clock.nanoTime();
        Hold hold = held("a", LEASE_MILLIS, true);
        long deadline = start + LEASE_MILLIS * MS - DRIFT;

        clock.advance(deadline - start - 1);
        assertThat(engine.lostAt).isEmpty();
        assertThat(engine.sent).as("the passes at 1 s and 2 s").hasSize(2);

        clock.advance(1);
        // the pass at 3 s would be 100 ms late: an alarm armed by the pass before it reports the hold on time
        assertThat(engine.lostAt).containsEntry(hold, deadline);
    }

    @Test
    void aConfirmedRenewalMovesTheDeadlineOn() {
        engine.confirm = true;
        Hold hold = held("a", LEASE_MILLIS, true);

        clock.advance(10_000 * MS);

        assertThat(engine.lostAt).isEmpty();
        assertThat(engine.sent).hasSize(10);
        assertThat(hold.leaseEndNanos()).isEqualTo(clock.nanoTime() + LEASE_MILLIS * MS);
    }

    /**
     * An acquisition whose reply took most of the validity (here 2.5 s of 2.9 s): the hold joins 100 ms after the
     * keeper started, its deadline 400 ms away, the first pass 900 ms away. It is renewed at once, not left for that
     * pass and reported lost before it.
     */
    @Test
    void aRenewedHoldThatJoinsWithLittleValidityLeftIsRenewedAtOnce() {
        engine.confirm = true;
        clock.advance(100 * MS);
        long sent = clock.nanoTime() - 2_500 * MS;
        Hold hold = new Hold("a", LockKeys.of("test", "a"), LockMode.WRITE, "owner", 1, LEASE_MILLIS, true, sent);
        holds.add(hold);
        keeper.watch(hold);

        clock.runDue();
        assertThat(engine.sent).as("renewed when it joined").containsExactly(List.of(hold));
        clock.advance(10_000 * MS);
        assertThat(engine.lostAt).isEmpty();
        assertThat(engine.sent).as("then by every pass").hasSize(11);
    }

    @Test
    void aRenewedHoldThatJoinsWithMostOfItsValidityIsLeftToThePasses() {
        clock.advance(100 * MS);
        held("a", LEASE_MILLIS, true);

        clock.runDue();
        assertThat(engine.sent).isEmpty();
    }

    @Test
    void aShortExplicitLeaseIsReportedAtItsDeadlineBeforeTheFirstPass() {
        long start = clock.nanoTime();
        Hold hold = held("a", 500, false);

        clock.advance(PERIOD_MILLIS * MS);

        assertThat(engine.lostAt).containsEntry(hold, start + 500 * MS - DRIFT);
        assertThat(engine.sent).as("an explicit lease is not renewed").isEmpty();
    }

    @Test
    void renewalsGoInBatchesOfAtMostBatchHoldsOfOneGroupEach() {
        for (int i = 0; i < 2 * LeaseKeeper.BATCH + 1; i++) {
            held("a" + i, LEASE_MILLIS, true);
        }
        for (int i = 0; i < 3; i++) {
            held("seven" + i, LEASE_MILLIS, true);
        }

        clock.advance(PERIOD_MILLIS * MS);

        assertThat(engine.sent).extracting(List::size)
                .containsExactlyInAnyOrder(LeaseKeeper.BATCH, LeaseKeeper.BATCH, 1, 3);
        assertThat(engine.sent).allSatisfy(batch ->
                assertThat(batch).extracting(engine::batchOf).containsOnly(engine.batchOf(batch.get(0))));
    }

    @Test
    void reconnectsAskedForBeforeThePassStartsCostOnePass() {
        held("a", LEASE_MILLIS, true);

        keeper.renewSoon();
        keeper.renewSoon();
        keeper.renewSoon();
        clock.runDue();

        assertThat(engine.sent).hasSize(1);
        keeper.renewSoon();
        clock.runDue();
        assertThat(engine.sent).hasSize(2);
    }

    @Test
    void aPassThatFailsDoesNotEndTheSchedule() {
        engine.confirm = true;
        engine.failuresToThrow = 1;
        held("a", LEASE_MILLIS, true);

        clock.advance(2 * PERIOD_MILLIS * MS);

        assertThat(engine.sent).as("the second pass").hasSize(1);
        assertThat(engine.lostAt).isEmpty();
    }

    @Test
    void aHoldBeingReleasedIsNeitherRenewedNorReportedLost() {
        Hold hold = held("a", LEASE_MILLIS, true);
        hold.beginRelease();

        clock.advance(2 * LEASE_MILLIS * MS);

        assertThat(engine.sent).isEmpty();
        assertThat(engine.lostAt).isEmpty();
    }

    @Test
    void aClosedKeeperSendsAndReportsNothing() {
        held("a", LEASE_MILLIS, true);
        keeper.close();

        clock.advance(2 * LEASE_MILLIS * MS);
        keeper.renewSoon();
        keeper.watch(held("b", 100, false));
        clock.advance(LEASE_MILLIS * MS);

        assertThat(engine.sent).isEmpty();
        assertThat(engine.lostAt).isEmpty();
    }
}
