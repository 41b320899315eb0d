package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.relock.internal.single.ServerFeatures;
import dev.relock.testredis.RedisBinary;
import dev.relock.testredis.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The lock contract on the redis-server 6.2 binary shipped in the embedded-redis jar, whatever redis-server is
 * installed: the scripts (TIME before writes, hashes, zsets, PUBLISH) must run on Redis 6.2 as well as on 7, and
 * this is the test that makes CI start that binary.
 */
@Tag("redis")
class EmbeddedRedisLockTest {

    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(1);

    private static RedisServer server;

    @BeforeAll
    static void startEmbeddedServer() {
        RedisBinary embedded;
        try {
            embedded = RedisBinary.embedded();
        } catch (UnsupportedOperationException e) {
            Assumptions.abort("the embedded redis-server does not run here: " + e.getMessage());
            return;
        }
        server = RedisServer.builder().binary(embedded).start();
    }

    @AfterAll
    static void stopServer() {
        if (server != null) {
            server.close();
        }
    }

    private static RelockClient client(Duration lease) {
        return RelockClient.builder().redisUri(server.uri()).defaultLease(lease).commandTimeout(COMMAND_TIMEOUT).build();
    }

    @Test
    void theServerIsTheEmbeddedRedis62() {
        assertThat(server.binary().source()).isEqualTo("embedded-redis");
        assertThat(server.binary().version()).startsWith("6.2.");
        assertThat(server.execute("INFO", "server")).contains("redis_version:6.2.");
    }

    @Test
    void aRedis62OffersNoneOfTheNewerCommands() {
        try (RelockClient client = client(Duration.ofSeconds(5))) {
            assertThat(ServerFeatures.of(client)).isEqualTo(ServerFeatures.NONE);
        }
    }

    @Test
    void twoClientsTimesTwoThreadsNeverOverlapAndLoseNoUpdate() throws Exception {
        int iterations = 50;
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        List<Long> tokens = new CopyOnWriteArrayList<>();
        server.execute("SET", "counter", "0");
        try (RelockClient a = client(Duration.ofSeconds(5)); RelockClient b = client(Duration.ofSeconds(5))) {
            ExecutorService threads = Executors.newFixedThreadPool(4);
            try {
                CountDownLatch start = new CountDownLatch(1);
                List<Future<?>> workers = new ArrayList<>();
                for (RelockClient client : List.of(a, a, b, b)) {
                    workers.add(threads.submit(() -> {
                        start.await();
                        RelockLock lock = client.lock("embedded-counter");
                        for (int i = 0; i < iterations; i++) {
                            lock.lock();
                            try {
                                if (inside.incrementAndGet() != 1) {
                                    overlaps.incrementAndGet();
                                }
                                tokens.add(lock.fencingToken().orElseThrow());
                                // read-modify-write in two commands: only mutual exclusion keeps every update
                                long value = Long.parseLong(server.execute("GET", "counter"));
                                server.execute("SET", "counter", Long.toString(value + 1));
                                inside.decrementAndGet();
                            } finally {
                                lock.unlock();
                            }
                        }
                        return null;
                    }));
                }
                start.countDown();
                for (Future<?> worker : workers) {
                    worker.get(60, TimeUnit.SECONDS);
                }
            } finally {
                threads.shutdownNow();
            }
        }
        assertThat(overlaps).hasValue(0);
        assertThat(server.execute("GET", "counter")).isEqualTo(Integer.toString(4 * iterations));
        // tokens were recorded in lock order, so they must strictly increase
        assertThat(tokens).hasSize(4 * iterations).isSorted().doesNotHaveDuplicates();
    }

    @Test
    void reentrancyAndFencingTokens() throws Exception {
        try (RelockClient a = client(Duration.ofSeconds(5)); RelockClient b = client(Duration.ofSeconds(5))) {
            RelockLock mine = a.lock("embedded-reentrant");
            RelockLock theirs = b.lock("embedded-reentrant");
            mine.lock();
            long first = mine.fencingToken().orElseThrow();
            assertThat(mine.tryLock()).isTrue();
            assertThat(mine.getHoldCount()).isEqualTo(2);
            assertThat(mine.fencingToken()).as("a re-entry keeps the token").hasValue(first);
            mine.unlock();
            assertThat(theirs.tryLock()).as("still held once").isFalse();
            mine.unlock();
            assertThat(mine.getHoldCount()).isZero();

            assertThat(theirs.tryLock()).isTrue();
            long second = theirs.fencingToken().orElseThrow();
            assertThat(second).isGreaterThan(first);
            theirs.unlock();
            try (LockHandle handle = mine.acquire()) {
                assertThat(handle.fencingToken()).isGreaterThan(second);
            }
            assertThat(mine.isLocked()).isFalse();
        }
    }

    @Test
    void anExplicitLeaseRunsOutAndTheNextHolderGetsIn() throws Exception {
        try (RelockClient a = client(Duration.ofSeconds(5)); RelockClient b = client(Duration.ofSeconds(5))) {
            RelockLock mine = a.lock("embedded-expiring");
            assertThat(mine.tryLock(0, 300, TimeUnit.MILLISECONDS)).isTrue();
            long lostToken = mine.fencingToken().orElseThrow();
            Optional<LockHandle> next = b.lock("embedded-expiring").tryAcquire(Duration.ofSeconds(10));
            assertThat(next).as("taken after the 300 ms lease ran out").isPresent();
            try (LockHandle handle = next.get()) {
                assertThat(handle.fencingToken()).isGreaterThan(lostToken);
                assertThatThrownBy(mine::unlock).isInstanceOf(LeaseLostException.class);
            }
        }
    }

    @Test
    void aRenewedLeaseOutlivesManyLeasesAndAWaiterIsWokenAtRelease() throws Exception {
        try (RelockClient a = client(Duration.ofMillis(600)); RelockClient b = client(Duration.ofMillis(600))) {
            RelockLock mine = a.lock("embedded-renewed");
            LockHandle handle = mine.acquire();
            Thread.sleep(2_400); // on purpose: four leases, kept alive only by the lease keeper's renewals
            assertThat(handle.isValid()).isTrue();
            assertThat(b.lock("embedded-renewed").tryLock()).isFalse();

            CompletableFuture<Boolean> waiter = CompletableFuture.supplyAsync(() -> {
                try {
                    Optional<LockHandle> theirs = b.lock("embedded-renewed").tryAcquire(Duration.ofSeconds(10));
                    theirs.ifPresent(LockHandle::close);
                    return theirs.isPresent();
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            await().atMost(Duration.ofSeconds(5))
                    .until(() -> "1".equals(server.execute("ZCARD", "relock:{embedded-renewed}:queue")));
            handle.close();
            assertThat(waiter.get(10, TimeUnit.SECONDS)).isTrue();
        }
    }
}
