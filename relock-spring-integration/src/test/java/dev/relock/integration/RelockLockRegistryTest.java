package dev.relock.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.relock.LeaseLostException;
import dev.relock.RelockClient;
import dev.relock.RelockClientBuilder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.ConcurrentModificationException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Lock;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.integration.support.locks.DistributedLock;

/**
 * The registry as Spring Integration users drive it: two registries with the same registry key
 * on two relock clients stand for two application instances sharing one Redis (the fixture's
 * redis-server on a free port).
 */
class RelockLockRegistryTest extends OneRedisPerClass {

    private final List<RelockClient> clients = new CopyOnWriteArrayList<>();
    private ExecutorService threads;
    private RelockClient clientA;
    private RelockLockRegistry instanceA;
    private RelockLockRegistry instanceB;

    @BeforeEach
    void twoInstances() {
        threads = Executors.newCachedThreadPool();
        clientA = newClient(UnaryOperator.identity());
        instanceA = new RelockLockRegistry(clientA, "app");
        instanceB = new RelockLockRegistry(newClient(UnaryOperator.identity()), "app");
    }

    @AfterEach
    void closeEverything() throws InterruptedException {
        threads.shutdownNow();
        boolean ended = threads.awaitTermination(HANG.toMillis(), TimeUnit.MILLISECONDS);
        clients.forEach(RelockClient::close);
        clients.clear();
        redis.flushAll();
        assertThat(ended).as("test threads ended").isTrue();
    }

    RelockClient newClient(UnaryOperator<RelockClientBuilder> settings) {
        RelockClient client = settings.apply(RelockClient.builder().redisUri(redis.uri())).build();
        clients.add(client);
        return client;
    }

    <T> T inOtherThread(java.util.concurrent.Callable<T> work) throws Exception {
        return threads.submit(work).get(HANG.toMillis(), TimeUnit.MILLISECONDS);
    }

    @Test
    void executeLockedRunsTheTaskWhileTheOtherInstanceCannotLock() throws Exception {
        List<Boolean> otherGotIt = new ArrayList<>();
        instanceA.executeLocked("job", () -> otherGotIt.add(instanceB.obtain("job").tryLock()));

        assertThat(otherGotIt).containsExactly(false);
        assertThat(clientA.lock("app:job").isLocked()).as("released after the task").isFalse();
    }

    @Test
    void executeLockedReturnsTheCallablesValueAndReleasesOnException() throws Exception {
        String value = instanceA.executeLocked("job", () -> "done");
        assertThat(value).isEqualTo("done");

        assertThatThrownBy(() -> instanceA.executeLocked("job", () -> {
            throw new IllegalStateException("task failed");
        })).hasMessage("task failed");
        assertThat(clientA.lock("app:job").isLocked()).isFalse();
    }

    @Test
    void executeLockedWithATimeoutGivesUpWhileTheOtherInstanceHoldsTheLock() throws Exception {
        DistributedLock held = instanceB.obtain("job");
        boolean heldByB = inOtherThread(() -> held.tryLock());
        assertThat(heldByB).isTrue();

        long start = System.nanoTime();
        AtomicInteger ran = new AtomicInteger();
        assertThatThrownBy(() -> instanceA.executeLocked("job", Duration.ofMillis(200), ran::incrementAndGet))
                .isInstanceOf(TimeoutException.class);
        assertThat(ran).hasValue(0);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isBetween(Duration.ofMillis(190), HANG);
    }

    @Test
    void tryLockWithATimeoutGetsTheLockWhenTheOtherInstanceUnlocks() throws Exception {
        DistributedLock lockA = instanceA.obtain("job");
        lockA.lock();
        CountDownLatch waiting = new CountDownLatch(1);
        Future<Boolean> b = threads.submit(() -> {
            waiting.countDown();
            boolean got = instanceB.obtain("job").tryLock(HANG.toMillis(), TimeUnit.MILLISECONDS);
            if (got) {
                instanceB.obtain("job").unlock();
            }
            return got;
        });
        waiting.await();
        assertThat(instanceB.obtain("job").tryLock(100, TimeUnit.MILLISECONDS))
                .as("the main thread of instance B meanwhile").isFalse();

        lockA.unlock();

        assertThat(b.get(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
    }

    @Test
    void twoInstancesNeverRunTheCriticalSectionAtTheSameTime() throws Exception {
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger mostInside = new AtomicInteger();
        AtomicInteger entries = new AtomicInteger();
        List<Future<?>> workers = new ArrayList<>();
        for (RelockLockRegistry instance : List.of(instanceA, instanceB)) {
            for (int t = 0; t < 3; t++) {
                workers.add(threads.submit(() -> {
                    for (int i = 0; i < 30; i++) {
                        instance.executeLocked("counter", () -> {
                            mostInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
                            entries.incrementAndGet();
                            Thread.yield();
                            inside.decrementAndGet();
                        });
                    }
                    return null;
                }));
            }
        }
        for (Future<?> worker : workers) {
            worker.get(HANG.toMillis() * 3, TimeUnit.MILLISECONDS);
        }

        assertThat(entries).hasValue(2 * 3 * 30);
        assertThat(mostInside).hasValue(1);
    }

    @Test
    void locksAreReentrantPerThreadAsTheLeaderInitiatorExpects() throws Exception {
        DistributedLock lock = instanceA.obtain("leader");
        assertThat(lock.tryLock(0, TimeUnit.MILLISECONDS)).isTrue();
        assertThat(lock.tryLock(0, TimeUnit.MILLISECONDS)).isTrue();
        lock.unlock();
        boolean otherGotIt = inOtherThread(() -> instanceB.obtain("leader").tryLock());
        assertThat(otherGotIt).isFalse();
        lock.unlock();
        assertThat(clientA.lock("app:leader").isLocked()).isFalse();
    }

    @Test
    void unlockByAThreadThatDoesNotHoldTheLockThrowsIllegalStateException() throws Exception {
        DistributedLock lock = instanceA.obtain("job");
        lock.lock();

        Throwable thrown = inOtherThread(() -> catchThrowable(lock::unlock));

        assertThat(thrown).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("You do not own lock 'app:job'")
                .hasCauseInstanceOf(IllegalMonitorStateException.class);
        assertThat(clientA.lock("app:job").isLocked()).as("still held by its owner").isTrue();
        lock.unlock();
    }

    @Test
    void unlockAfterTheTimeToLiveRanOutThrowsConcurrentModificationException() {
        DistributedLock lock = instanceA.obtain("job");
        lock.lock(Duration.ofMillis(200));
        await().atMost(HANG).until(() -> !clientA.lock("app:job").isLocked());

        assertThatThrownBy(lock::unlock).isInstanceOf(ConcurrentModificationException.class)
                .hasMessageContaining("'app:job'")
                .hasCauseInstanceOf(LeaseLostException.class);
    }

    @Test
    void aLockWithATimeToLiveIsFreeForTheOtherInstanceOnceItRunsOut() throws Exception {
        assertThat(instanceA.obtain("job").tryLock(Duration.ZERO, Duration.ofMillis(300))).isTrue();

        long start = System.nanoTime();
        boolean got = inOtherThread(() -> instanceB.obtain("job").tryLock(HANG.toMillis(), TimeUnit.MILLISECONDS));

        assertThat(got).isTrue();
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isBetween(Duration.ofMillis(150), HANG);
    }

    @Test
    void aLockWithoutTimeToLiveOutlivesManyLeasesWhileHeld() {
        RelockClient shortLease = newClient(b -> b.defaultLease(Duration.ofMillis(300)));
        RelockLockRegistry registry = new RelockLockRegistry(shortLease, "app");
        DistributedLock lock = registry.obtain("job");
        lock.lock();
        long token = shortLease.lock("app:job").fencingToken().orElseThrow();

        await().during(Duration.ofMillis(1200)).atMost(HANG)
                .until(() -> shortLease.lock("app:job").fencingToken().orElse(-1) == token);
        registry.renewLock("job");
        lock.unlock();
    }

    @Test
    void renewLockWithATimeToLiveKeepsTheOtherInstanceOutPastTheFirstOne() throws Exception {
        DistributedLock lock = instanceA.obtain("job");
        lock.lock(Duration.ofMillis(500));
        long renewedAt = System.nanoTime();
        instanceA.renewLock("job", Duration.ofSeconds(2));

        long otherGotItAfter = inOtherThread(() -> {
            DistributedLock other = instanceB.obtain("job");
            assertThat(other.tryLock(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
            long after = System.nanoTime() - renewedAt;
            other.unlock();
            return after;
        });

        assertThat(Duration.ofNanos(otherGotItAfter)).as("from the renewal until the other instance held it")
                .isGreaterThanOrEqualTo(Duration.ofMillis(1900)).isLessThan(HANG);
        assertThatThrownBy(lock::unlock).isInstanceOf(ConcurrentModificationException.class);
    }

    @Test
    void renewLockWithoutATimeToLiveExtendsToTheClientsDefaultLease() {
        RelockClient longLease = newClient(b -> b.defaultLease(Duration.ofSeconds(20)));
        RelockLockRegistry registry = new RelockLockRegistry(longLease, "app");
        DistributedLock lock = registry.obtain("job");
        lock.lock(Duration.ofMillis(500));

        registry.renewLock("job");

        assertThat(longLease.lock("app:job").remainingLease()).hasValueSatisfying(left ->
                assertThat(left).isGreaterThan(Duration.ofSeconds(10)));
        assertThat(longLease.heldLocks()).singleElement()
                .satisfies(held -> assertThat(held.renewed()).as("renewed by the lease keeper").isFalse());
        lock.unlock();
    }

    @Test
    void renewLockRefusesAThreadThatDoesNotHoldTheLockAndALostLease() throws Exception {
        assertThatThrownBy(() -> instanceA.renewLock("job"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("'app:job'")
                .hasCauseInstanceOf(IllegalMonitorStateException.class);

        DistributedLock lock = instanceA.obtain("job");
        lock.lock();
        instanceA.renewLock("job");
        instanceA.renewLock("job", Duration.ofSeconds(30));
        Throwable fromAnotherThread = inOtherThread(() -> catchThrowable(() -> instanceA.renewLock("job")));
        assertThat(fromAnotherThread).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("'app:job'").hasMessageContaining("current thread");
        assertThatThrownBy(() -> instanceB.renewLock("job")).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> instanceA.renewLock("job", Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("ttl");
        assertThatThrownBy(() -> instanceA.renewLock("job", null))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("ttl");
        lock.unlock();

        DistributedLock expiring = instanceA.obtain("expiring");
        expiring.lock(Duration.ofMillis(200));
        await().atMost(HANG).until(() -> !clientA.lock("app:expiring").isLocked());
        assertThatThrownBy(() -> instanceA.renewLock("expiring")).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("'app:expiring'").hasMessageContaining("lost")
                .hasCauseInstanceOf(LeaseLostException.class);
        assertThatThrownBy(expiring::unlock).isInstanceOf(ConcurrentModificationException.class);
    }

    @Test
    void keysAreNamedAfterTheRegistryKeyAndMustBeStrings() {
        RelockLockRegistry other = new RelockLockRegistry(clientA, "other");
        DistributedLock lock = instanceA.obtain("job");
        lock.lock();

        assertThat(instanceA.lockName("job")).isEqualTo("app:job");
        assertThat(clientA.inspect("app:job").isHeld()).isTrue();
        assertThat(other.obtain("job").tryLock()).isTrue();
        other.obtain("job").unlock();
        lock.unlock();

        assertThatThrownBy(() -> instanceA.obtain(42)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("String").hasMessageContaining("java.lang.Integer");
        assertThatThrownBy(() -> new RelockLockRegistry(clientA, " "))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("registryKey");
        assertThatThrownBy(() -> instanceA.obtain("job").lock(null))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("ttl");
        assertThatThrownBy(() -> instanceA.obtain("job").newCondition())
                .isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void expireUnusedOlderThanLeavesHeldLocksAlone() {
        Lock lock = instanceA.obtain("job");
        lock.lock();
        instanceA.expireUnusedOlderThan(0);
        assertThat(clientA.lock("app:job").isHeldByCurrentThread()).isTrue();
        lock.unlock();
    }

    private static Throwable catchThrowable(Runnable action) {
        CompletableFuture<Throwable> thrown = new CompletableFuture<>();
        try {
            action.run();
            thrown.complete(null);
        } catch (RuntimeException e) {
            thrown.complete(e);
        }
        return thrown.join();
    }
}
