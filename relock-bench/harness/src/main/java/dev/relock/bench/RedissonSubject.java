package dev.relock.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReadWriteLock;

/**
 * Redisson's RLock, RFairLock or RFencedLock of one release line, with Redisson's default configuration; or its
 * Redlock: a {@code RedissonRedLock} over one RLock per server, each server with a Redisson client of its own
 * (default configuration), as Redisson documents it. That class is deprecated in Redisson but still shipped; a line
 * without it fails to connect with a message that says so, and the report shows that message in its row.
 */
final class RedissonSubject implements Subject {

    /** Which lock: its name in the report and the RedissonClient method that makes it. */
    enum Kind {
        RLOCK("RLock", "getLock"),
        RFAIRLOCK("RFairLock", "getFairLock"),
        RFENCEDLOCK("RFencedLock", "getFencedLock"),
        /** connects to several independent servers at once */
        REDLOCK("RedissonRedLock", "getLock");

        /** The kinds on one server. */
        static final Set<Kind> ONE_SERVER = EnumSet.range(RLOCK, RFENCEDLOCK);

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

    /** @param redisUri the server, or for {@link Kind#REDLOCK} the independent servers, comma-separated */
    @Override
    public Client connect(String redisUri, Duration lease) throws ReflectiveOperationException {
        if (kind == Kind.REDLOCK) {
            return connectRedLock(redisUri.split(","), lease);
        }
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

    private Client connectRedLock(String[] redisUris, Duration lease) throws ReflectiveOperationException {
        if (!line.hasRedLock()) {
            throw new IllegalStateException("Redisson " + line.version() + " ships no RedissonRedLock");
        }
        List<Object> clients = new ArrayList<>();
        try {
            for (String uri : redisUris) {
                clients.add(line.createClient(uri, lease));
            }
        } catch (ReflectiveOperationException | RuntimeException e) {
            clients.forEach(line::shutdown);
            throw e;
        }
        return new Client() {
            @Override
            public Lock lock(String name) {
                List<Lock> perServer = new ArrayList<>();
                for (Object client : clients) {
                    perServer.add(line.lock(client, kind.factory, "bench-redlock" + line.major() + ":" + name));
                }
                return line.redLock(perServer);
            }

            @Override
            public void close() {
                clients.forEach(line::shutdown);
            }
        };
    }
}
