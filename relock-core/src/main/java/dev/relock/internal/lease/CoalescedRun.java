package dev.relock.internal.lease;

import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A task that any thread may ask for and that runs on a keeper's own thread: every ask that
 * comes before the run starts is served by that one run (a burst of reconnects costs one renewal
 * pass, not one per connection). Once the executor is shut down, asks do nothing.
 */
final class CoalescedRun {

    private final Executor thread;
    private final Runnable task;
    // a run is queued and has not started
    private final AtomicBoolean queued = new AtomicBoolean();

    CoalescedRun(Executor thread, Runnable task) {
        this.thread = thread;
        this.task = task;
    }

    /** Makes sure the task starts after this call. Any thread. */
    void ask() {
        if (!queued.compareAndSet(false, true)) {
            return;
        }
        try {
            thread.execute(() -> {
                queued.set(false);
                task.run();
            });
        } catch (RejectedExecutionException e) {
            // shut down
        }
    }
}
