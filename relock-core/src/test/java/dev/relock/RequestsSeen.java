package dev.relock;

import dev.relock.testredis.TcpProxy;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntConsumer;

/**
 * The requests carrying a marker (a script's SHA-1, a lock's key) that pass the connections a {@link TcpProxy} has
 * open when the watch starts: each is counted on the proxy's reader thread before it is passed on, and an action
 * (at the {@code nth}, or at each) runs there first, so a fault it switches (a heal) applies to that request. A
 * test that must act once an attempt has failed, which only the client sees, acts on what the client sends after
 * the failure instead (the next attempt, or the clean-up of the failed one). Public for the tests of other packages.
 */
public final class RequestsSeen {

    private final AtomicInteger count = new AtomicInteger();
    private final IntConsumer action; // given the number of each request, on the proxy's reader thread

    private RequestsSeen(IntConsumer action) {
        this.action = action;
    }

    /** Watches {@code proxy}'s open connections from now on, running {@code action} once {@code nth} requests passed. */
    public static RequestsSeen watch(TcpProxy proxy, String marker, int nth, Runnable action) {
        return eachOf(proxy, marker, seen -> {
            if (seen == nth) {
                action.run();
            }
        });
    }

    /**
     * Watches {@code proxy}'s open connections from now on, running {@code action} with the number of each request
     * (1 for the first), before that request is passed on.
     */
    public static RequestsSeen eachOf(TcpProxy proxy, String marker, IntConsumer action) {
        RequestsSeen seen = new RequestsSeen(action);
        for (TcpProxy.Connection connection : proxy.connections()) {
            seen.armOn(connection, marker);
        }
        return seen;
    }

    /** Only counts the requests carrying {@code marker} on {@code proxy}'s open connections from now on. */
    public static RequestsSeen count(TcpProxy proxy, String marker) {
        return watch(proxy, marker, Integer.MAX_VALUE, () -> { });
    }

    /** How many requests carrying the marker passed so far. */
    public int count() {
        return count.get();
    }

    // a connection's trigger fires once: it is armed again, before the action runs, for the next request
    private void armOn(TcpProxy.Connection connection, String marker) {
        connection.onRequestWith(marker, () -> {
            armOn(connection, marker);
            action.accept(count.incrementAndGet());
        });
    }
}
