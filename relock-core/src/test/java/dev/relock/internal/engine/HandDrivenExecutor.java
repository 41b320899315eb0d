package dev.relock.internal.engine;

import io.netty.util.Timeout;
import io.netty.util.Timer;
import io.netty.util.TimerTask;
import java.util.List;
import java.util.Set;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A client's clock, event executors and hashed wheel that move only when a test says so: one {@link HandMovedClock}
 * under all three, so {@link #advance} runs every task that falls due on the way, executors' and wheel's alike, in
 * order of its time (then of scheduling), on the test's thread, with the clock at the task's time while it runs. What
 * this adds to the clock is the wheel and a count of what was armed where, so a test can tell a timer on the wheel
 * from one on the executors. Not thread-safe: one test thread drives it.
 */
final class HandDrivenExecutor extends AbstractExecutorService implements ScheduledExecutorService, Ticker {

    private final HandMovedClock clock = new HandMovedClock();
    private int onExecutors;
    private int onWheel;

    @Override
    public long nanoTime() {
        return clock.nanoTime();
    }

    /** Moves the clock {@code nanos} on, running what falls due by then (tasks they schedule included). */
    void advance(long nanos) {
        clock.advance(nanos);
    }

    /** Runs what is due now. */
    void runDue() {
        clock.runDue();
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
        return clock.pending();
    }

    /** A hashed wheel on this clock: its timeouts run when {@link #advance} passes them. */
    Timer wheel() {
        return new Timer() {
            @Override
            public Timeout newTimeout(TimerTask task, long delay, TimeUnit unit) {
                onWheel++;
                Timer wheel = this;
                Timeout[] timeout = new Timeout[1];
                ScheduledFuture<?> fires = clock.schedule(() -> {
                    try {
                        task.run(timeout[0]);
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                }, delay, unit);
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
        return clock.schedule(command, delay, unit);
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
        clock.shutdown();
    }

    @Override
    public List<Runnable> shutdownNow() {
        return clock.shutdownNow();
    }

    @Override
    public boolean isShutdown() {
        return clock.isShutdown();
    }

    @Override
    public boolean isTerminated() {
        return clock.isTerminated();
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) {
        return clock.awaitTermination(timeout, unit);
    }
}
