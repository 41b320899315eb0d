package dev.relock.internal.engine;

import io.netty.util.Timeout;
import io.netty.util.Timer;
import io.netty.util.TimerTask;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.Delayed;
import java.util.concurrent.Executors;
import java.util.concurrent.FutureTask;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A client's clock, event executors and hashed wheel that move only when a test says so: {@link #advance} runs every
 * task that falls due on the way, executors' and wheel's alike, in order of its time (then of scheduling), on the
 * test's thread, with the clock at the task's time while it runs. It counts what was armed where, so a test can tell
 * a timer on the wheel from one on the executors. Not thread-safe: one test thread drives it.
 */
final class HandDrivenExecutor extends AbstractExecutorService implements ScheduledExecutorService, Ticker {

    private final class Task extends FutureTask<Object> implements ScheduledFuture<Object> {
        private final long due;
        private final long sequence;

        Task(Callable<Object> body, long due) {
            super(body);
            this.due = due;
            this.sequence = scheduled++;
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

    // any start, near the wrap: deadlines are compared by difference, as System.nanoTime() values are
    private long now = Long.MAX_VALUE - TimeUnit.SECONDS.toNanos(10);
    private final PriorityQueue<Task> tasks = new PriorityQueue<>(
            Comparator.comparingLong((Task task) -> task.due - now).thenComparingLong(task -> task.sequence));
    private long scheduled;
    private int onExecutors;
    private int onWheel;
    private boolean shutDown;

    @Override
    public long nanoTime() {
        return now;
    }

    /** Moves the clock {@code nanos} on, running what falls due by then (tasks they schedule included). */
    void advance(long nanos) {
        long target = now + nanos;
        while (!tasks.isEmpty() && tasks.peek().due - target <= 0) {
            Task task = tasks.poll();
            if (task.due - now > 0) {
                now = task.due;
            }
            task.run();
        }
        now = target;
    }

    /** Runs what is due now. */
    void runDue() {
        advance(0);
    }

    /** How many tasks were given to the executors, to run at once or later (a wheel's fired timeouts included). */
    int givenToExecutors() {
        return onExecutors;
    }

    /** How many timeouts were armed on the wheel. */
    int armedOnWheel() {
        return onWheel;
    }

    /** How many tasks wait to run, cancelled ones aside. */
    long waiting() {
        return tasks.stream().filter(task -> !task.isCancelled()).count();
    }

    /** A hashed wheel on this clock: its timeouts run when {@link #advance} passes them. */
    Timer wheel() {
        return new Timer() {
            @Override
            public Timeout newTimeout(TimerTask task, long delay, TimeUnit unit) {
                onWheel++;
                Timer wheel = this;
                Timeout[] timeout = new Timeout[1];
                Task fires = enqueue(Executors.callable(() -> {
                    try {
                        task.run(timeout[0]);
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                }), unit.toNanos(delay));
                timeout[0] = new Timeout() {
                    @Override
                    public Timer timer() {
                        return wheel;
                    }

                    @Override
                    public TimerTask task() {
                        return task;
                    }

                    @Override
                    public boolean isExpired() {
                        return fires.isDone() && !fires.isCancelled();
                    }

                    @Override
                    public boolean isCancelled() {
                        return fires.isCancelled();
                    }

                    @Override
                    public boolean cancel() {
                        return fires.cancel(false);
                    }
                };
                return timeout[0];
            }

            @Override
            public Set<Timeout> stop() {
                return Set.of();
            }
        };
    }

    @Override
    public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
        onExecutors++;
        return enqueue(Executors.callable(command), unit.toNanos(delay));
    }

    @Override
    public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
        throw new UnsupportedOperationException("not used by acquisitions");
    }

    @Override
    public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period, TimeUnit unit) {
        throw new UnsupportedOperationException("not used by acquisitions");
    }

    @Override
    public ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay, long delay, TimeUnit unit) {
        throw new UnsupportedOperationException("not used by acquisitions");
    }

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
        shutdown();
        return List.of();
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

    private Task enqueue(Callable<Object> body, long delayNanos) {
        if (shutDown) {
            throw new RejectedExecutionException("shut down");
        }
        Task task = new Task(body, now + Math.max(0, delayNanos));
        tasks.add(task);
        return task;
    }
}
