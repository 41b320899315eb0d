package dev.relock.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.Lock;

/**
 * Redisson's Redlock of one release line: a {@code RedissonRedLock} over one RLock per server, each
 * server with a Redisson client of its own (default configuration), as Redisson documents it. The
 * class is deprecated in Redisson but still shipped; a line without it fails to connect with a
 * message that says so, and the report shows that message in its row.
 */
final class RedissonRedLockSubject implements Subject {

    private final RedissonLine line;

    RedissonRedLockSubject(RedissonLine line) {
        this.line = line;
    }

    @Override
    public String label() {
        return "Redisson " + line.version() + " RedissonRedLock";
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

    /** @param redisUris the independent servers, comma-separated */
    @Override
    public Client connect(String redisUris, Duration lease) throws ReflectiveOperationException {
        if (!line.hasRedLock()) {
            throw new IllegalStateException("Redisson " + line.version() + " ships no RedissonRedLock");
        }
        List<Object> clients = new ArrayList<>();
        try {
            for (String uri : redisUris.split(",")) {
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
                    perServer.add(line.lock(client, "getLock", "bench-redlock" + line.major() + ":" + name));
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
