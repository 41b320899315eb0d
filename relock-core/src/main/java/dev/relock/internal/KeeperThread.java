package dev.relock.internal;

import java.util.concurrent.ScheduledThreadPoolExecutor;

/** The one daemon thread on which a client renews its leases and checks their deadlines. */
public final class KeeperThread {

    private KeeperThread() {
    }

    /** Starts an executor with one daemon thread named {@code <role>-<first 8 characters of the client id>}. */
    public static ScheduledThreadPoolExecutor start(String role, String clientId) {
        return new ScheduledThreadPoolExecutor(1, runnable -> {
            Thread t = new Thread(runnable, role + "-" + clientId.substring(0, 8));
            t.setDaemon(true);
            return t;
        });
    }
}
