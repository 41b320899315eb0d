package dev.relock.bench;

import dev.relock.RelockClient;
import dev.relock.RelockClientBuilder;
import java.time.Duration;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReadWriteLock;

/** relock's exclusive lock with default settings (its lease renewed by the lease keeper). */
final class RelockSubject implements Subject {

    private final String version;

    RelockSubject(String version) {
        this.version = version;
    }

    @Override
    public String label() {
        return "relock " + version;
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
        return "relock " + version + " readWriteLock";
    }

    @Override
    public Client connect(String redisUri, Duration lease) {
        LongAdder lost = new LongAdder();
        RelockClientBuilder builder = RelockClient.builder()
                .redisUri(redisUri)
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
