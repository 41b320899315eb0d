package dev.relock.internal.engine;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.Delayed;
import java.util.concurrent.FutureTask;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A {@link Ticker} and the timer that runs on it, both moved only by the test: {@link #advance} runs every task
 * that falls due on the way, in order of its time (then of scheduling), on the test's thread, with the clock set
 * to the task's time while it runs. Nothing runs unless the test moves the clock or calls {@link #runDue}. Not
 * thread-safe: one test thread drives it.
 *
 * <p>Public because the unit tests of the lease keeper and of both engines, each in a package of its own, move it.
 */
public final class HandMovedClock extends AbstractExecutorService implements Ticker, ScheduledExecutorService {

    // any start: readings are compared by difference, as System.nanoTime() values are; this one is near the wrap
    private long now = Long.MAX_VALUE - 1_000_000_000_000L;
    // by time left, which orders tasks alike whatever now is, also where their due times wrap
    private final PriorityQueue<Task<?>> tasks = new PriorityQueue<>(
            Comparator.<Task<?>>comparingLong(task -> task.due - now).thenComparingLong(t -> t.sequence));
    private long sequence;
    private boolean shutDown;

    /** A task due at a time of this clock; cancelling it takes it out of the run. */
    private final class Task<V> extends FutureTask<V> implements ScheduledFuture<V> {
        final long due;
        final long sequence;

        Task(Callable<V> call, long due, long sequence) {
            super(call);
            this.due = due;
            this.sequence = sequence;
        }

        @Override
        public long getDelay(TimeUnit unit) {
            return unit.convert(due - now, TimeUnit.NANOSECONDS);
        }

        @Override
        public int compareTo(Delayed other) {
            return Long.compare(getDelay(TimeUnit.NANOSECONDS), other.getDelay(TimeUnit.NANOSECONDS));
        }
    }

    @Override
    public long nanoTime() {
        return now;
    }

    /** Moves the clock {@code nanos} on, running what falls due by then (tasks they schedule included). */
    public void advance(long nanos) {
        long target = now + nanos;
        while (!tasks.isEmpty() && tasks.peek().due - target <= 0) {
            Task<?> task = tasks.poll();
            if (task.isCancelled()) {
                continue;
            }
            now = task.due - now > 0 ? task.due : now;
            task.run();
        }
        now = target;
    }

    /** Moves the clock {@code millis} on, as {@link #advance} does. */
    public void advanceMillis(long millis) {
        advance(TimeUnit.MILLISECONDS.toNanos(millis));
    }

    /** Moves the clock to {@code at} (a reading of this clock, not before now), as {@link #advance} does. */
    public void advanceTo(long at) {
        advance(at - now);
    }

    /** Runs what is due now. */
    public void runDue() {
        advance(0);
    }

    /** How many tasks wait for their time, cancelled ones left out. */
    public int pending() {
        return (int) tasks.stream().filter(task -> !task.isCancelled()).count();
    }

    @Override
    public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
        if (shutDown) {
            throw new RejectedExecutionException("shut down");
        }
        Task<V> task = new Task<>(callable, now + Math.max(0, unit.toNanos(delay)), sequence++);
        tasks.add(task);
        return task;
    }

    @Override
    public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
        return schedule(() -> {
            command.run();
            return null;
        }, delay, unit);
    }

    /** Not used by the classes under test, which arm one-shot timers only. */
    @Override
    public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period, TimeUnit unit) {
        throw new UnsupportedOperationException("one-shot timers only");
    }

    /** Not used by the classes under test, which arm one-shot timers only. */
    @Override
    public ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay, long delay,
            TimeUnit unit) {
        throw new UnsupportedOperationException("one-shot timers only");
    }

    /** Runs {@code command} when the test next moves the clock or runs what is due, not in the caller. */
    @Override
    public void execute(Runnable command) {
        schedule(command, 0, TimeUnit.NANOSECONDS);
    }

    @Override
    public void shutdown() {
        shutDown = true;
        tasks.clear();
    }

    @Override
    public List<Runnable> shutdownNow() {
        List<Runnable> never = new ArrayList<>(tasks);
        shutdown();
        return never;
    }

    @Override
    public boolean isShutdown() {
        return shutDown;
    }

    @Override
    public boolean isTerminated() {
        return shutDown;
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) {
        return shutDown;
    }
}
