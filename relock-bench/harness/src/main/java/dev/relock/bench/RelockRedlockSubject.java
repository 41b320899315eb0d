package dev.relock.bench;

import dev.relock.RelockClient;
import dev.relock.RelockClientBuilder;
import java.time.Duration;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.Lock;

/** relock's exclusive lock on Redlock ({@code builder().redlock(...)}), otherwise default settings. */
final class RelockRedlockSubject implements Subject {

    private final String version;

    RelockRedlockSubject(String version) {
        this.version = version;
    }

    @Override
    public String label() {
        return "relock " + version + " Redlock";
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

    /** @param redisUris the independent servers, comma-separated */
    @Override
    public Client connect(String redisUris, Duration lease) {
        LongAdder lost = new LongAdder();
        RelockClientBuilder builder = RelockClient.builder()
                .redlock(redisUris.split(","))
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
