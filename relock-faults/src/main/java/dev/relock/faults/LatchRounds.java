package dev.relock.faults;

import dev.relock.RelockCountDownLatch;
import java.time.Duration;

/**
 * The latch workload's loops, one per worker thread: rounds of count-down latches, in {@value #LANES} lanes at once.
 * Each lane is a sequence of rounds ({@code campaign-latch-<round>}, round ids unique across lanes,
 * {@link #roundId}), each armed by the {@link LatchCoordinator}, which then names the round in its lane's key
 * ({@link #roundKey}) on the resource Redis. A worker has {@value #THREADS_A_LANE} threads in each lane: the first
 * counts each round it sees down once, the others wait in each round they see, for {@link #AWAIT_MILLIS}. Each step
 * is logged so that {@link LatchChecker} can tell a latch that opened before its count-downs, and a waiter that
 * missed an opening.
 *
 * <p>The lanes exist for density: a lane's round that never opens holds it for {@link LatchCoordinator#ROUND_TIME},
 * so one lane runs about two rounds a second; several at once put more latches (and more waiters on one client) under
 * the same fault.
 */
final class LatchRounds {

    /** Lanes of rounds running at once. */
    static final int LANES = 8;
    /** A worker's threads in each lane: a counter and two waiters. */
    static final int THREADS_A_LANE = 3;
    /** A worker's threads: {@value #THREADS_A_LANE} in each of the {@value #LANES} lanes. */
    static final int THREADS = LANES * THREADS_A_LANE;
    /** A waiter's await: longer than an opening takes to arrive, shorter than a round's idle expiry. */
    static final long AWAIT_MILLIS = 2_000;
    /** How often a thread looks for the next round; the coordinator starts one every few ms at most. */
    private static final long POLL_MILLIS = 10;

    private LatchRounds() {
    }

    /** The resource Redis key naming lane {@code lane}'s current round. */
    static String roundKey(int lane) {
        return "campaign:round:" + lane;
    }

    /** The id of lane {@code lane}'s {@code n}th round (from 1): unique across lanes, never 0. */
    static long roundId(int lane, long n) {
        return n * LANES + lane;
    }

    static String latchName(long round) {
        return "campaign-latch-" + round;
    }

    static void run(WorkerThread t) throws InterruptedException {
        int lane = (t.index() - 1) / THREADS_A_LANE;
        boolean counter = (t.index() - 1) % THREADS_A_LANE == 0;
        String key = roundKey(lane);
        long seen = 0;
        while (t.running()) {
            long round;
            try {
                String current = t.resource().get(key);
                round = current == null ? 0 : Long.parseLong(current);
            } catch (RuntimeException e) {
                t.failed("round: ", e);
                continue;
            }
            if (round <= seen) {
                Thread.sleep(POLL_MILLIS); // nothing new: the coordinator has not started the lane's next round yet
                continue;
            }
            seen = round;
            RelockCountDownLatch latch = t.client().countDownLatch(latchName(round));
            if (counter) {
                // a little later than the waiters, so that they are often waiting when the latch opens
                Thread.sleep(t.random().nextInt(20));
                countDown(t, latch, round);
            } else {
                await(t, latch, round);
            }
        }
    }

    private static void countDown(WorkerThread t, RelockCountDownLatch latch, long round) throws InterruptedException {
        t.log(EventKind.COUNT_SENT, round, "");
        try {
            t.log(EventKind.COUNTED, round, Long.toString(latch.countDown()));
        } catch (RuntimeException e) {
            t.failed("", e); // not sent again: a count-down that reached Redis counts once, a second would count again
        }
    }

    private static void await(WorkerThread t, RelockCountDownLatch latch, long round) throws InterruptedException {
        t.log(EventKind.LATCH_WAIT, round, Long.toString(AWAIT_MILLIS));
        try {
            boolean open = latch.await(Duration.ofMillis(AWAIT_MILLIS));
            t.log(open ? EventKind.LATCH_OPEN : EventKind.LATCH_TIMEOUT, round, "");
        } catch (RuntimeException e) { // an expired round's latch, or Redis trouble
            t.failed("", e);
        }
    }
}
