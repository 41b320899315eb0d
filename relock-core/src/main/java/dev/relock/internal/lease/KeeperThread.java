package dev.relock.internal.lease;

import dev.relock.internal.engine.Ticker;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The one daemon thread on which a client renews its leases and checks their deadlines, named
 * {@code <role>-<first 8 characters of the client id>}, on the client's {@link Ticker}. Cancelled tasks are
 * removed at once, so none lingers until its old time. The executor waits by System.nanoTime(), so the delays it is
 * given count on the ticker only while the ticker is {@link Ticker#SYSTEM}, as it is in every client the builder
 * makes.
 */
final class KeeperThread implements KeeperScheduler {

    private final ScheduledThreadPoolExecutor thread;
    private final Ticker ticker;

    KeeperThread(String role, String clientId, Ticker ticker) {
        this.ticker = ticker;
        thread = new ScheduledThreadPoolExecutor(1, runnable -> {
            Thread t = new Thread(runnable, role + "-" + clientId.substring(0, 8));
            t.setDaemon(true);
            return t;
        });
        thread.setRemoveOnCancelPolicy(true);
    }

    @Override
    public long nanoTime() {
        return ticker.nanoTime();
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
