package dev.relock.faults;

import dev.relock.RelockCountDownLatch;
import java.time.Duration;

/**
 * The latch workload's loops, one per worker thread: rounds of a count-down latch ({@code campaign-latch-<round>}),
 * each armed by the {@link LatchCoordinator}, which then names the round in {@value #ROUND} on the resource Redis.
 * Thread 1 of each worker counts each round it sees down once; the others wait in each round they see, for
 * {@link #AWAIT_MILLIS}. Each step is logged so that {@link LatchChecker} can tell a latch that opened before its
 * count-downs, and a waiter that missed an opening.
 */
final class LatchRounds {

    static final String ROUND = "campaign:round";
    /** A waiter's await: longer than an opening takes to arrive, shorter than a round's idle expiry. */
    static final long AWAIT_MILLIS = 2_000;
    /** How often a thread looks for the next round; the coordinator starts one every few ms at most. */
    private static final long POLL_MILLIS = 10;

    private LatchRounds() {
    }

    static String latchName(long round) {
        return "campaign-latch-" + round;
    }

    static void run(WorkerThread t) throws InterruptedException {
        boolean counter = t.index() == 1;
        long seen = 0;
        while (t.running()) {
            long round;
            try {
                String current = t.resource().get(ROUND);
                round = current == null ? 0 : Long.parseLong(current);
            } catch (RuntimeException e) {
                t.failed("round: ", e);
                continue;
            }
            if (round <= seen) {
                Thread.sleep(POLL_MILLIS); // nothing new: the coordinator has not started the next round yet
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
