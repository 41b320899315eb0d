package dev.relock.internal.engine;

import io.netty.util.Timeout;
import io.netty.util.Timer;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * Far timers of a client: they wait on its hashed wheel timer, Lettuce's, whose thread ticks anyway for the command
 * timeouts, so arming or cancelling one wakes no thread (on the event executors, either wakes one). A timeout on the
 * wheel may fire late by a tick or two (100 ms each with Lettuce's default resources), so only a timer at least
 * {@link #FAR_NANOS} away, whose lateness nobody waits for, goes there; the others, the end of a caller's wait among
 * them, stay on the event executors. Either way the task runs on the event executors, not on the wheel's thread,
 * which Lettuce's timeouts share (only once the executors are shut down, with the client, does it run there). A
 * wheel with another tick than Lettuce's default (the caller's own {@code ClientResources}) makes them as late as
 * that tick.
 *
 * <p>Public because both engines' acquisitions and polls use it.
 */
public final class WheelTimers {

    /** How far away a timer must be at least to wait on the wheel. */
    public static final long FAR_NANOS = TimeUnit.SECONDS.toNanos(1);

    private WheelTimers() {
    }

    /**
     * Arms {@code task} to run on {@code events} {@code delayNanos} from now, or a little later; on {@code events}
     * shut down (the client closing), it runs on the wheel's thread instead. A wheel that stops (with the client's
     * resources) drops what is armed on it, as the executors drop their scheduled tasks.
     *
     * @throws IllegalStateException if the wheel was stopped (the client's resources shut down)
     * @throws RejectedExecutionException if the wheel refuses more timeouts
     */
    public static Timeout onWheel(Timer wheel, Executor events, Runnable task, long delayNanos) {
        return wheel.newTimeout(fired -> runOn(events, task), delayNanos, TimeUnit.NANOSECONDS);
    }

    private static void runOn(Executor events, Runnable task) {
        try {
            events.execute(task);
        } catch (RejectedExecutionException e) {
            task.run();
        }
    }
}
