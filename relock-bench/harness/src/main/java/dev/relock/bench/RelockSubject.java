package dev.relock.bench;

import dev.relock.RelockClient;
import dev.relock.RelockClientBuilder;
import java.time.Duration;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReadWriteLock;

/**
 * relock's exclusive lock with default settings (its lease renewed by the lease keeper), on one server or on
 * Redlock over independent servers.
 */
final class RelockSubject implements Subject {

    private final String version;
    private final boolean redlock;

    private RelockSubject(String version, boolean redlock) {
        this.version = version;
        this.redlock = redlock;
    }

    /** On the one server {@link #connect} is given. */
    static RelockSubject standalone(String version) {
        return new RelockSubject(version, false);
    }

    /** On Redlock ({@code builder().redlock(...)}) over the comma-separated servers {@link #connect} is given. */
    static RelockSubject redlock(String version) {
        return new RelockSubject(version, true);
    }

    @Override
    public String label() {
        return "relock " + version + (redlock ? " Redlock" : "");
    }

    @Override
    public String family() {
        return "relock";
    }

    @Override
    public boolean waits() {
        return true;
    }

    @Override
    public boolean renews() {
        return true;
    }

    @Override
    public String readWriteLabel() {
        // S5 runs on one server only
        return redlock ? null : "relock " + version + " readWriteLock";
    }

    /** @param redisUri the server, or for Redlock the independent servers, comma-separated */
    @Override
    public Client connect(String redisUri, Duration lease) {
        LongAdder lost = new LongAdder();
        RelockClientBuilder builder = (redlock ? RelockClient.builder().redlock(redisUri.split(","))
                : RelockClient.builder().redisUri(redisUri))
                .keyPrefix("bench-relock")
                .leaseLostListener(event -> lost.increment());
        if (lease != null) {
            builder.defaultLease(lease);
        }
        RelockClient client = builder.build();
        return new Client() {
            @Override
            public Lock lock(String name) {
                return client.lock(name);
            }

            @Override
            public ReadWriteLock readWriteLock(String name) {
                return client.readWriteLock(name);
            }

            @Override
            public long lostLeases() {
                return lost.sum();
            }

            @Override
            public void close() {
                client.close();
            }
        };
    }
}
