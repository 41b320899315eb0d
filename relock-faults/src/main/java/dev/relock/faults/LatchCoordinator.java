package dev.relock.faults;

import dev.relock.RelockClient;
import dev.relock.RelockCountDownLatch;
import java.time.Duration;

/**
 * Starts the latch workload's rounds ({@link LatchRounds}), in a thread of the campaign's JVM: arms round r's latch
 * with a count, logs ROUND_SET, names the round on the resource Redis, and waits for the latch to open (at most
 * {@link #ROUND_TIME}) before the next. Every {@value #NEVER_OPENING}th round is armed with one count more than there
 * are counting workers, so that it expires unopened (its waiters must not wake), unless a worker started in place of a
 * killed one counts it down too.
 *
 * <p>Its thread owns the client and the round; {@link #close()} stops it and waits for it.
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
    private final Thread thread;
    private volatile boolean stopped;

    private LatchCoordinator(RelockClient client, Resources resources, HistoryWriter history, int counters) {
        this.client = client;
        this.resources = resources;
        this.history = history;
        this.counters = counters;
        this.thread = new Thread(this::run, "latch-coordinator");
    }

    /** Starts rounds counted down by {@code counters} workers, logging to {@code history}; the client is its own. */
    static LatchCoordinator start(RelockClient client, Resources resources, HistoryWriter history, int counters) {
        LatchCoordinator coordinator = new LatchCoordinator(client, resources, history, counters);
        coordinator.thread.start();
        return coordinator;
    }

    private void run() {
        long round = 0;
        while (!stopped) {
            round++;
            long count = round % NEVER_OPENING == 0 ? counters + 1 : counters;
            RelockCountDownLatch latch = client.countDownLatch(LatchRounds.latchName(round));
            try {
                if (!latch.trySetCount(count, IDLE_EXPIRY)) {
                    history.append(EventKind.ERROR, round, "round " + round + " was armed already");
                    continue;
                }
                history.append(EventKind.ROUND_SET, round, Long.toString(count));
                resources.setRound(round);
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
        thread.interrupt();
        thread.join(Duration.ofSeconds(30).toMillis());
        client.close();
    }
}
