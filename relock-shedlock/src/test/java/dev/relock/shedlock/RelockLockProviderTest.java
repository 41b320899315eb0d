package dev.relock.shedlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.relock.RelockClient;
import dev.relock.testredis.RedisServer;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The provider as a scheduled job sees it on two application instances (two relock clients on
 * one fixture redis-server): keep-alive past the client's lease, lockAtLeastFor, ShedLock's
 * executor running a job once, and the provider's own rules.
 */
@Tag("redis")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RelockLockProviderTest {

    /** A bound that only a hang exceeds; never a performance goal. */
    static final Duration HANG = Duration.ofSeconds(10);
    static final Duration SHORT_LEASE = Duration.ofMillis(400);

    private RedisServer redis;
    private final List<RelockClient> clients = new CopyOnWriteArrayList<>();
    private RelockClient clientA;
    private RelockLockProvider instanceA;
    private RelockLockProvider instanceB;

    @BeforeAll
    void startRedis() {
        redis = RedisServer.start();
    }

    @AfterAll
    void stopRedis() {
        redis.close();
    }

    @BeforeEach
    void twoInstances() {
        clientA = newClient();
        instanceA = new RelockLockProvider(clientA);
        instanceB = new RelockLockProvider(newClient());
    }

    @AfterEach
    void closeClients() {
        clients.forEach(RelockClient::close);
        clients.clear();
        redis.flushAll();
    }

    private RelockClient newClient() {
        RelockClient client = RelockClient.builder().redisUri(redis.uri()).defaultLease(SHORT_LEASE).build();
        clients.add(client);
        return client;
    }

    private static LockConfiguration job(String name, Duration lockAtMostFor, Duration lockAtLeastFor) {
        return new LockConfiguration(Instant.now(), name, lockAtMostFor, lockAtLeastFor);
    }

    private boolean locked(String job) {
        return clientA.lock(instanceA.lockName(job)).isLocked();
    }

    @Test
    void aJobRunningLongerThanTheLeaseKeepsItsLockFromTheOtherInstance() {
        SimpleLock lock = instanceA.lock(job("report", Duration.ofMillis(100), Duration.ZERO)).orElseThrow();

        await().during(SHORT_LEASE.multipliedBy(4)).atMost(HANG)
                .until(() -> instanceB.lock(job("report", Duration.ofMinutes(1), Duration.ZERO)).isEmpty());

        lock.unlock();
        Optional<SimpleLock> next = instanceB.lock(job("report", Duration.ofMinutes(1), Duration.ZERO));
        assertThat(next).isPresent();
        next.get().unlock();
    }

    @Test
    void withTheLockAtMostForLeaseALongJobLosesItsLockAfterLockAtMostFor() {
        RelockLockProvider classicA = new RelockLockProvider(clientA, "shedlock", RelockLockProvider.Lease.LOCK_AT_MOST_FOR);
        long start = System.nanoTime(); // before the lease began in Redis
        SimpleLock lock = classicA.lock(job("report", Duration.ofMillis(300), Duration.ZERO)).orElseThrow();

        await().atMost(HANG).until(() -> !locked("report"));
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(300));

        long lockStart = System.nanoTime();
        Optional<SimpleLock> next = instanceB.lock(job("report", Duration.ofMinutes(1), Duration.ZERO));
        assertThat(next).isPresent();
        assertThat(Duration.ofNanos(System.nanoTime() - lockStart)).as("lock() does not wait").isLessThan(Duration.ofSeconds(1));
        lock.unlock(); // the lost lease is logged, not thrown
        assertThat(locked("report")).as("the other instance's lock is untouched").isTrue();
        next.get().unlock();
    }

    @Test
    void unlockBeforeLockAtLeastForKeepsTheLockUntilThen() {
        Duration lockAtLeastFor = Duration.ofMillis(800);
        long start = System.nanoTime();
        SimpleLock lock = instanceA.lock(job("cleanup", Duration.ofMinutes(1), lockAtLeastFor)).orElseThrow();

        lock.unlock();
        assertThat(instanceB.lock(job("cleanup", Duration.ofMinutes(1), Duration.ZERO))).isEmpty();
        assertThat(instanceA.lock(job("cleanup", Duration.ofMinutes(1), Duration.ZERO))).isEmpty();

        await().atMost(HANG).pollInterval(Duration.ofMillis(20)).until(() -> !locked("cleanup"));
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(lockAtLeastFor);
        Optional<SimpleLock> next = instanceB.lock(job("cleanup", Duration.ofMinutes(1), Duration.ZERO));
        assertThat(next).isPresent();
        next.get().unlock();
    }

    @Test
    void unlockAfterLockAtLeastForFreesTheLockAtOnce() {
        // a nanosecond has passed since the lock was taken by the time unlock() runs
        SimpleLock lock = instanceA.lock(job("cleanup", Duration.ofMinutes(1), Duration.ofNanos(1))).orElseThrow();

        lock.unlock();

        assertThat(locked("cleanup")).isFalse();
    }

    @Test
    void shedLocksExecutorRunsAJobOnceWhenBothInstancesFireTogether() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        LockConfiguration config = job("nightly", Duration.ofMinutes(1), Duration.ZERO);

        CompletableFuture<Void> onA = CompletableFuture.runAsync(() -> new DefaultLockingTaskExecutor(instanceA)
                .executeWithLock((Runnable) () -> {
                    runs.incrementAndGet();
                    running.countDown();
                    awaitQuietly(finish);
                }, config));
        assertThat(running.await(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        new DefaultLockingTaskExecutor(instanceB).executeWithLock((Runnable) runs::incrementAndGet, config);
        finish.countDown();
        onA.get(HANG.toMillis(), TimeUnit.MILLISECONDS);

        assertThat(runs).hasValue(1);
        assertThat(locked("nightly")).isFalse();
    }

    @Test
    void anotherThreadMayUnlockButOnlyOnce() throws Exception {
        SimpleLock lock = instanceA.lock(job("report", Duration.ofMinutes(1), Duration.ZERO)).orElseThrow();

        CompletableFuture.runAsync(lock::unlock).get(HANG.toMillis(), TimeUnit.MILLISECONDS);

        assertThat(locked("report")).isFalse();
        assertThatThrownBy(lock::unlock).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("'shedlock:report'").hasMessageContaining("already unlocked");
    }

    @Test
    void extendKeepsAClassicLockUntilTheNewLockAtMostForAndUsesUpTheOldLock() {
        RelockLockProvider classicA = new RelockLockProvider(clientA, "shedlock", RelockLockProvider.Lease.LOCK_AT_MOST_FOR);
        SimpleLock lock = classicA.lock(job("report", Duration.ofMillis(300), Duration.ZERO)).orElseThrow();
        long extendedAt = System.nanoTime();

        SimpleLock extended = lock.extend(Duration.ofMillis(1500), Duration.ZERO).orElseThrow();

        assertThatThrownBy(lock::unlock).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("'shedlock:report'").hasMessageContaining("extended");
        assertThatThrownBy(() -> lock.extend(Duration.ofMinutes(1), Duration.ZERO))
                .isInstanceOf(IllegalStateException.class);
        assertThat(instanceB.lock(job("report", Duration.ofMinutes(1), Duration.ZERO))).isEmpty();
        await().atMost(HANG).pollInterval(Duration.ofMillis(20)).until(() -> !locked("report"));
        assertThat(Duration.ofNanos(System.nanoTime() - extendedAt)).as("held from the extension")
                .isGreaterThanOrEqualTo(Duration.ofMillis(1400));
        Optional<SimpleLock> next = instanceB.lock(job("report", Duration.ofMinutes(1), Duration.ZERO));
        assertThat(next).isPresent();
        extended.unlock(); // the lost lease is logged, not thrown
        assertThat(locked("report")).as("the other instance's lock is untouched").isTrue();
        next.get().unlock();
    }

    @Test
    void anExtendedLockCountsLockAtLeastForFromTheExtensionAndItsRenewalsAskForLockAtMostFor() {
        SimpleLock lock = instanceA.lock(job("cleanup", Duration.ofMinutes(1), Duration.ZERO)).orElseThrow();
        long extendedAt = System.nanoTime();

        SimpleLock extended = lock.extend(Duration.ofMinutes(1), Duration.ofSeconds(2)).orElseThrow();

        // renewed while the job runs, now each time for lockAtMostFor instead of the client's 400 ms
        await().during(SHORT_LEASE.multipliedBy(2)).atMost(HANG).untilAsserted(() ->
                assertThat(clientA.lock(instanceA.lockName("cleanup")).remainingLease()).hasValueSatisfying(left ->
                        assertThat(left).isGreaterThan(Duration.ofSeconds(50))));
        extended.unlock();
        assertThat(instanceB.lock(job("cleanup", Duration.ofMinutes(1), Duration.ZERO))).isEmpty();
        await().atMost(HANG).pollInterval(Duration.ofMillis(20)).until(() -> !locked("cleanup"));
        assertThat(Duration.ofNanos(System.nanoTime() - extendedAt)).isGreaterThanOrEqualTo(Duration.ofSeconds(2));
    }

    @Test
    void extendingALostLockReturnsEmptyAndGivesTheHoldUp() {
        RelockLockProvider classicA = new RelockLockProvider(clientA, "shedlock", RelockLockProvider.Lease.LOCK_AT_MOST_FOR);
        SimpleLock lock = classicA.lock(job("report", Duration.ofMillis(200), Duration.ZERO)).orElseThrow();
        await().atMost(HANG).until(() -> !locked("report"));

        assertThat(lock.extend(Duration.ofMinutes(1), Duration.ZERO)).isEmpty();

        assertThat(locked("report")).as("the extension took nothing back").isFalse();
        assertThat(clientA.heldLocks()).as("the lost hold is given up").isEmpty();
        assertThatThrownBy(lock::unlock).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void badExtensionsAreNamedAndLeaveTheLockUsable() {
        SimpleLock lock = instanceA.lock(job("report", Duration.ofMinutes(1), Duration.ZERO)).orElseThrow();

        assertThatThrownBy(() -> lock.extend(null, Duration.ZERO))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("lockAtMostFor");
        assertThatThrownBy(() -> lock.extend(Duration.ofMinutes(1), null))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("lockAtLeastFor");
        assertThatThrownBy(() -> lock.extend(Duration.ZERO, Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lockAtMostFor");
        assertThatThrownBy(() -> lock.extend(Duration.ofSeconds(1), Duration.ofSeconds(2)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lockAtLeastFor");

        lock.unlock();
        assertThat(locked("report")).isFalse();
    }

    @Test
    void badArgumentsAreNamed() {
        assertThatThrownBy(() -> new RelockLockProvider(clientA, " ", RelockLockProvider.Lease.LOCK_AT_MOST_FOR))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("namePrefix");
        assertThatThrownBy(() -> new RelockLockProvider(clientA, "jobs", null))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("lease");
        assertThatThrownBy(() -> instanceA.lock(null))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("lockConfiguration");
        assertThat(new RelockLockProvider(clientA, "jobs", RelockLockProvider.Lease.LOCK_AT_MOST_FOR).lockName("x"))
                .isEqualTo("jobs:x");
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            assertThat(latch.await(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
