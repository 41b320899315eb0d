package dev.relock.internal.lease;

import java.util.concurrent.Executor;
import java.util.concurrent.Future;

/**
 * The one thread a {@link LeaseKeeper} runs on, and the clock it reads deadlines by: {@link KeeperThread}
 * in a client, a hand-driven one in tests, so deadline logic is checked without Redis and without
 * sleeping out real leases (Caffeine's {@code Ticker} and {@code Scheduler} are the model). Tasks run one
 * at a time, in the order they are due.
 */
interface KeeperScheduler extends Executor {

    /** Now, on the clock of every deadline the keeper compares (the client's {@code Ticker}). */
    long nanoTime();

    /**
     * Runs {@code task} once, {@code delayNanos} from now; cancelling the returned future removes it.
     *
     * @throws java.util.concurrent.RejectedExecutionException once shut down
     */
    Future<?> schedule(Runnable task, long delayNanos);

    /** Stops the thread; tasks not yet started never run, and later ones are rejected. */
    void shutdown();
}
