package dev.relock.internal.lease;

import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;

/**
 * One one-shot check of a lease keeper, run on the keeper's own thread at the earliest deadline
 * it was armed for: how a keeper tells a holder at its deadline and not at its next pass.
 *
 * <p>Invariant: after {@link #arm arm(at)} returns, a check runs at {@code at} or earlier (unless
 * the thread is shut down). At most one check is queued: arming earlier cancels the later one,
 * arming later keeps the earlier one. The check is on the keeper thread, after every task queued there before its
 * time, so a reply read before a deadline is handled before that deadline's check.
 */
final class DeadlineAlarm {

    private final KeeperScheduler thread;
    private final Runnable check;
    // the check armed and when it runs (thread.nanoTime()); null when none is (guarded by this)
    private Future<?> armed;
    private long armedAt;

    /** {@code thread}: the keeper's one thread, on which {@code check} runs. */
    DeadlineAlarm(KeeperScheduler thread, Runnable check) {
        this.thread = thread;
        this.check = check;
    }

    /** Makes sure the check runs at {@code at} (thread.nanoTime()) or earlier. Any thread. */
    synchronized void arm(long at) {
        if (armed != null && armedAt - at <= 0) {
            return;
        }
        if (armed != null) {
            armed.cancel(false);
        }
        try {
            armed = thread.schedule(this::fire, Math.max(0, at - thread.nanoTime()));
            armedAt = at;
        } catch (RejectedExecutionException e) {
            armed = null; // closed
        }
    }

    private void fire() {
        synchronized (this) {
            if (armed != null && armedAt - thread.nanoTime() <= 0) {
                armed = null; // this one; a later one armed meanwhile stays
            }
        }
        check.run();
    }
}
