package dev.relock.internal.lease;

import java.util.Comparator;
import java.util.PriorityQueue;
import java.util.concurrent.Future;
import java.util.concurrent.FutureTask;
import java.util.concurrent.RejectedExecutionException;

/**
 * A {@link KeeperScheduler} whose clock moves only when a test says so: {@link #advance} runs every
 * task that falls due on the way, in order of its time (then of scheduling), on the test's thread, with
 * the clock set to the task's time while it runs. Not thread-safe: one test thread drives it.
 */
final class HandDrivenScheduler implements KeeperScheduler {

    private record Task(long due, long sequence, FutureTask<Void> run) {
    }

    private final PriorityQueue<Task> tasks =
            new PriorityQueue<>(Comparator.comparingLong(Task::due).thenComparingLong(Task::sequence));
    // any start: deadlines are compared by difference, as System.nanoTime() values are
    private long now = Long.MAX_VALUE - 1_000_000_000_000L;
    private long sequence;
    private boolean shutDown;

    @Override
    public long nanoTime() {
        return now;
    }

    @Override
    public Future<?> schedule(Runnable task, long delayNanos) {
        if (shutDown) {
            throw new RejectedExecutionException("shut down");
        }
        FutureTask<Void> run = new FutureTask<>(task, null);
        tasks.add(new Task(now + Math.max(0, delayNanos), sequence++, run));
        return run;
    }

    @Override
    public void execute(Runnable task) {
        schedule(task, 0);
    }

    @Override
    public void shutdown() {
        shutDown = true;
        tasks.clear();
    }

    /** Moves the clock {@code nanos} on, running what falls due by then (tasks they schedule included). */
    void advance(long nanos) {
        long target = now + nanos;
        while (!tasks.isEmpty() && tasks.peek().due() - target <= 0) {
            Task task = tasks.poll();
            if (task.run().isCancelled()) {
                continue;
            }
            now = task.due() - now > 0 ? task.due() : now;
            task.run().run();
        }
        now = target;
    }

    /** Runs what is due now. */
    void runDue() {
        advance(0);
    }
}
