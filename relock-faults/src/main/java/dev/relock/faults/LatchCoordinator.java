package dev.relock.faults;

import dev.relock.RelockClient;
import dev.relock.RelockCountDownLatch;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Starts the latch workload's rounds ({@link LatchRounds}), in one thread of the campaign's JVM for each of its
 * {@value LatchRounds#LANES} lanes: a lane's thread arms its round's latch with a count, logs ROUND_SET, names the
 * round in the lane's key on the resource Redis, and waits for the latch to open (at most {@link #ROUND_TIME}) before
 * the lane's next. Every {@value #NEVER_OPENING}th round of a lane is armed with one count more than there are
 * counting workers, so that it expires unopened (its waiters must not wake), unless a worker started in place of a
 * killed one counts it down too.
 *
 * <p>Each lane's thread owns its lane's rounds; the client is shared by them and closed by {@link #close()}, which
 * stops the threads and waits for them.
 */
final class LatchCoordinator implements AutoCloseable {

    /** How long a round's latch lives after its last change: longer than a waiter's await. */
    static final Duration IDLE_EXPIRY = Duration.ofSeconds(3);
    /** How long the coordinator waits for a round to open before it starts the next. */
    static final Duration ROUND_TIME = Duration.ofSeconds(2);
    static final int NEVER_OPENING = 4;

    private final RelockClient client;
    private final Resources resources;
    private final HistoryWriter history;
    private final int counters;
    private final List<Thread> lanes = new ArrayList<>();
    private volatile boolean stopped;

    private LatchCoordinator(RelockClient client, Resources resources, HistoryWriter history, int counters) {
        this.client = client;
        this.resources = resources;
        this.history = history;
        this.counters = counters;
        for (int lane = 0; lane < LatchRounds.LANES; lane++) {
            int it = lane;
            lanes.add(new Thread(() -> run(it), "latch-coordinator-" + lane));
        }
    }

    /** Starts rounds counted down by {@code counters} workers, logging to {@code history}; the client is its own. */
    static LatchCoordinator start(RelockClient client, Resources resources, HistoryWriter history, int counters) {
        LatchCoordinator coordinator = new LatchCoordinator(client, resources, history, counters);
        coordinator.lanes.forEach(Thread::start);
        return coordinator;
    }

    private void run(int lane) {
        long n = 0;
        while (!stopped) {
            n++;
            long round = LatchRounds.roundId(lane, n);
            long count = n % NEVER_OPENING == 0 ? counters + 1 : counters;
            RelockCountDownLatch latch = client.countDownLatch(LatchRounds.latchName(round));
            try {
                if (!latch.trySetCount(count, IDLE_EXPIRY)) {
                    history.append(EventKind.ERROR, round, "round " + round + " was armed already");
                    continue;
                }
                history.append(EventKind.ROUND_SET, round, Long.toString(count));
                resources.setRound(lane, round);
                latch.await(ROUND_TIME);
            } catch (InterruptedException e) {
                return; // close() stops it
            } catch (RuntimeException e) {
                // Redis trouble: this round is left to expire, the next starts after a pause
                history.append(EventKind.ERROR, round, WorkerThread.describe(e));
                sleep(50);
            }
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() throws InterruptedException {
        stopped = true;
        lanes.forEach(Thread::interrupt);
        for (Thread lane : lanes) {
            lane.join(Duration.ofSeconds(30).toMillis());
        }
        client.close();
    }
}
