package dev.relock.internal.lease;

import java.util.concurrent.Future;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The one daemon thread on which a client renews its leases and checks their deadlines, named
 * {@code <role>-<first 8 characters of the client id>}, on System.nanoTime(). Cancelled tasks are removed
 * at once, so none lingers until its old time.
 */
final class KeeperThread implements KeeperScheduler {

    private final ScheduledThreadPoolExecutor thread;

    KeeperThread(String role, String clientId) {
        thread = new ScheduledThreadPoolExecutor(1, runnable -> {
            Thread t = new Thread(runnable, role + "-" + clientId.substring(0, 8));
            t.setDaemon(true);
            return t;
        });
        thread.setRemoveOnCancelPolicy(true);
    }

    @Override
    public long nanoTime() {
        return System.nanoTime();
    }

    @Override
    public Future<?> schedule(Runnable task, long delayNanos) {
        return thread.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
    }

    @Override
    public void execute(Runnable task) {
        thread.execute(task);
    }

    @Override
    public void shutdown() {
        thread.shutdownNow();
    }
}
