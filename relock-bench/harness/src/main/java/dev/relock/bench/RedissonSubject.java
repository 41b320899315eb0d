package dev.relock.bench;

import java.time.Duration;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReadWriteLock;

/** Redisson's RLock, RFairLock or RFencedLock of one release line, with Redisson's default configuration. */
final class RedissonSubject implements Subject {

    /** Which lock: its name in the report and the RedissonClient method that makes it. */
    enum Kind {
        RLOCK("RLock", "getLock"),
        RFAIRLOCK("RFairLock", "getFairLock"),
        RFENCEDLOCK("RFencedLock", "getFencedLock");

        final String label;
        final String factory;

        Kind(String label, String factory) {
            this.label = label;
            this.factory = factory;
        }
    }

    private final RedissonLine line;
    private final Kind kind;

    RedissonSubject(RedissonLine line, Kind kind) {
        this.line = line;
        this.kind = kind;
    }

    Kind kind() {
        return kind;
    }

    @Override
    public String label() {
        return "Redisson " + line.version() + " " + kind.label;
    }

    @Override
    public String family() {
        return "redisson" + line.major();
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
        // one RReadWriteLock per release line, listed with its RLock
        return kind == Kind.RLOCK ? "Redisson " + line.version() + " RReadWriteLock" : null;
    }

    @Override
    public Client connect(String redisUri, Duration lease) throws ReflectiveOperationException {
        Object client = line.createClient(redisUri, lease);
        return new Client() {
            @Override
            public Lock lock(String name) {
                return line.lock(client, kind.factory, "bench-redisson" + line.major() + ":" + name);
            }

            @Override
            public ReadWriteLock readWriteLock(String name) {
                return line.readWriteLock(client, "bench-redisson" + line.major() + ":" + name);
            }

            @Override
            public void close() {
                line.shutdown(client);
            }
        };
    }
}
