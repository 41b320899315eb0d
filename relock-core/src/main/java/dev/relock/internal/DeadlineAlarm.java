package dev.relock.internal;

import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * One one-shot check of a lease keeper, run on the keeper's own thread at the earliest deadline
 * it was armed for: how a keeper tells a holder at its deadline and not at its next pass.
 *
 * <p>Invariant: after {@link #arm arm(at)} returns, a check runs at {@code at} or earlier (unless
 * the thread is shut down). At most one check is queued: arming earlier cancels the later one
 * (the executor removes cancelled tasks, so none lingers until its old time), arming later keeps
 * the earlier one. The check is on the keeper thread, after every task queued there before its
 * time, so a reply read before a deadline is handled before that deadline's check.
 */
public final class DeadlineAlarm {

    private final ScheduledThreadPoolExecutor thread;
    private final Runnable check;
    // the check armed and when it runs (System.nanoTime()); null when none is (guarded by this)
    private ScheduledFuture<?> armed;
    private long armedAt;

    /** {@code thread}: the keeper's one thread, on which {@code check} runs. */
    public DeadlineAlarm(ScheduledThreadPoolExecutor thread, Runnable check) {
        this.thread = thread;
        this.check = check;
        thread.setRemoveOnCancelPolicy(true);
    }

    /** Makes sure the check runs at {@code at} (System.nanoTime()) or earlier. Any thread. */
    public synchronized void arm(long at) {
        if (armed != null && armedAt - at <= 0) {
            return;
        }
        if (armed != null) {
            armed.cancel(false);
        }
        try {
            armed = thread.schedule(this::fire, Math.max(0, at - System.nanoTime()), TimeUnit.NANOSECONDS);
            armedAt = at;
        } catch (RejectedExecutionException e) {
            armed = null; // closed
        }
    }

    private void fire() {
        synchronized (this) {
            if (armed != null && armedAt - System.nanoTime() <= 0) {
                armed = null; // this one; a later one armed meanwhile stays
            }
        }
        check.run();
    }
}
