package dev.relock.examples;

import dev.relock.LockHandle;
import dev.relock.RelockClient;
import dev.relock.RelockLock;
import dev.relock.testredis.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Several relock clients (each with its own connections, as separate processes would have)
 * increment one counter kept in Redis with a plain GET then SET: first under a lock, then without.
 * With the lock no update is lost and fencing tokens only rise; without it updates get lost.
 *
 * <p>Uses the Redis at {@code $RELOCK_REDIS} if set, else starts a private redis-server.
 * Run: {@code mvn -B -q install -DskipTests && mvn -B -q -pl relock-examples exec:java}
 */
public final class CrossClientDemo {

    private static final int CLIENTS = 4;
    private static final int THREADS_PER_CLIENT = 2;
    private static final int INCREMENTS_PER_THREAD = 250;

    public static void main(String[] args) throws Exception {
        String given = System.getenv("RELOCK_REDIS");
        try (RedisServer server = given == null ? RedisServer.start() : null) {
            String uri = given != null ? given : server.uri();
            System.out.println("Redis: " + (given != null ? uri : uri + " (private redis-server, stopped at the end)"));
            Result locked = run(uri, true);
            Result unlocked = run(uri, false);
            int expected = CLIENTS * THREADS_PER_CLIENT * INCREMENTS_PER_THREAD;
            System.out.printf("%n%-14s %10s %10s %12s %14s %16s%n",
                    "", "expected", "counter", "lost", "ms", "token order");
            print("with lock", expected, locked);
            print("without lock", expected, unlocked);
            System.out.println(locked.counter == expected && locked.tokenOrderViolations == 0
                    ? "\nThe lock kept every update across " + CLIENTS + " clients."
                    : "\nUNEXPECTED: updates were lost under the lock.");
        }
    }

    private record Result(long counter, long millis, long tokenOrderViolations, List<Integer> perClient) {}

    private static void print(String label, int expected, Result r) {
        System.out.printf("%-14s %10d %10d %12d %14d %16s   per client %s%n", label, expected, r.counter,
                expected - r.counter, r.millis, r.tokenOrderViolations < 0 ? "-" : r.tokenOrderViolations + " broken",
                r.perClient);
    }

    private static Result run(String uri, boolean useLock) throws Exception {
        String counterKey = "relock-demo:counter:" + System.nanoTime();
        RedisClient admin = RedisClient.create(uri);
        List<RelockClient> clients = new ArrayList<>();
        try (var connection = admin.connect()) {
            RedisCommands<String, String> redis = connection.sync();
            redis.set(counterKey, "0");
            for (int i = 0; i < CLIENTS; i++) {
                clients.add(RelockClient.builder().redisUri(uri).defaultLease(Duration.ofSeconds(10)).build());
            }
            AtomicLong lastToken = new AtomicLong();
            AtomicLong violations = new AtomicLong();
            List<AtomicInteger> perClient = new ArrayList<>();
            CountDownLatch start = new CountDownLatch(1);
            List<Thread> threads = new ArrayList<>();
            for (int c = 0; c < CLIENTS; c++) {
                RelockLock lock = clients.get(c).lock("demo:counter");
                AtomicInteger done = new AtomicInteger();
                perClient.add(done);
                for (int t = 0; t < THREADS_PER_CLIENT; t++) {
                    Thread worker = new Thread(() -> {
                        try (var own = admin.connect()) {
                            RedisCommands<String, String> mine = own.sync();
                            start.await();
                            for (int i = 0; i < INCREMENTS_PER_THREAD; i++) {
                                if (useLock) {
                                    try (LockHandle held = lock.acquire()) {
                                        if (held.fencingToken() <= lastToken.getAndSet(held.fencingToken())) {
                                            violations.incrementAndGet();
                                        }
                                        increment(mine, counterKey);
                                    }
                                } else {
                                    increment(mine, counterKey);
                                }
                                done.incrementAndGet();
                            }
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    });
                    worker.start();
                    threads.add(worker);
                }
            }
            long begin = System.nanoTime();
            start.countDown();
            for (Thread thread : threads) {
                thread.join();
            }
            long millis = (System.nanoTime() - begin) / 1_000_000;
            long counter = Long.parseLong(redis.get(counterKey));
            redis.del(counterKey);
            return new Result(counter, millis, useLock ? violations.get() : -1,
                    perClient.stream().map(AtomicInteger::get).toList());
        } finally {
            clients.forEach(RelockClient::close);
            admin.shutdown();
        }
    }

    /** The classic lost-update race: read, add one, write back. */
    private static void increment(RedisCommands<String, String> redis, String key) {
        long value = Long.parseLong(redis.get(key));
        redis.set(key, Long.toString(value + 1));
    }

    private CrossClientDemo() {}
}
