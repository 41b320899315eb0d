package dev.relock.internal.lease;

import dev.relock.internal.engine.HandMovedClock;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * A {@link KeeperScheduler} whose clock moves only when a test says so: the keeper's view of a
 * {@link HandMovedClock}, which runs every task that falls due on the way, in order, on the test's thread. Not
 * thread-safe: one test thread drives it.
 */
final class HandDrivenScheduler implements KeeperScheduler {

    private final HandMovedClock clock = new HandMovedClock();

    @Override
    public long nanoTime() {
        return clock.nanoTime();
    }

    @Override
    public Future<?> schedule(Runnable task, long delayNanos) {
        return clock.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
    }

    @Override
    public void execute(Runnable task) {
        clock.execute(task);
    }

    @Override
    public void shutdown() {
        clock.shutdown();
    }

    /** Moves the clock {@code nanos} on, running what falls due by then (tasks they schedule included). */
    void advance(long nanos) {
        clock.advance(nanos);
    }

    /** Runs what is due now. */
    void runDue() {
        clock.runDue();
    }
}
