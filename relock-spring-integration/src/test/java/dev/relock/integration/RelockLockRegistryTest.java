package dev.relock.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.relock.LeaseLostException;
import dev.relock.RelockClient;
import dev.relock.RelockCondition;
import java.time.Duration;
import java.util.ArrayList;
import java.util.ConcurrentModificationException;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Lock;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The registry as Spring Integration users drive it, through the API that 6.x and 7.x share: these
 * tests run on both lines (relock-spring-integration-6 compiles them against 6.5). Locks are typed
 * {@link Lock}, what 6.x's {@code obtain} returns; a hold with a lease that is not renewed is taken
 * through relock, as 6.x users do. What only 7.x's {@code DistributedLock} adds is in
 * {@link DistributedLockTest}.
 */
@Tag("redis")
class RelockLockRegistryTest extends TwoInstances {

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
        Lock held = instanceB.obtain("job");
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
        Lock lockA = instanceA.obtain("job");
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
        Lock lock = instanceA.obtain("leader");
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
        Lock lock = instanceA.obtain("job");
        lock.lock();

        Throwable thrown = inOtherThread(() -> catchThrowable(lock::unlock));

        assertThat(thrown).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("You do not own lock 'app:job'")
                .hasCauseInstanceOf(IllegalMonitorStateException.class);
        assertThat(clientA.lock("app:job").isLocked()).as("still held by its owner").isTrue();
        lock.unlock();
    }

    @Test
    void unlockAfterTheLeaseRanOutThrowsConcurrentModificationException() {
        Lock lock = lockWithLease(clientA, instanceA, "job", Duration.ofMillis(200));
        await().atMost(HANG).until(() -> !clientA.lock("app:job").isLocked());

        assertThatThrownBy(lock::unlock).isInstanceOf(ConcurrentModificationException.class)
                .hasMessageContaining("'app:job'")
                .hasCauseInstanceOf(LeaseLostException.class);
    }

    @Test
    void aLockWithoutTimeToLiveOutlivesManyLeasesWhileHeld() {
        RelockClient shortLease = newClient(b -> b.defaultLease(Duration.ofMillis(300)));
        RelockLockRegistry registry = new RelockLockRegistry(shortLease, "app");
        Lock lock = registry.obtain("job");
        lock.lock();
        long token = shortLease.lock("app:job").fencingToken().orElseThrow();

        await().during(Duration.ofMillis(1200)).atMost(HANG)
                .until(() -> shortLease.lock("app:job").fencingToken().orElse(-1) == token);
        registry.renewLock("job");
        lock.unlock();
    }

    @Test
    void renewLockWithATimeToLiveKeepsTheOtherInstanceOutPastTheFirstOne() throws Exception {
        Lock lock = lockWithLease(clientA, instanceA, "job", Duration.ofMillis(500));
        long renewedAt = System.nanoTime();
        instanceA.renewLock("job", Duration.ofSeconds(2));

        long otherGotItAfter = inOtherThread(() -> {
            Lock other = instanceB.obtain("job");
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
        Lock lock = lockWithLease(longLease, registry, "job", Duration.ofMillis(500));

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

        Lock lock = instanceA.obtain("job");
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

        Lock expiring = lockWithLease(clientA, instanceA, "expiring", Duration.ofMillis(200));
        await().atMost(HANG).until(() -> !clientA.lock("app:expiring").isLocked());
        assertThatThrownBy(() -> instanceA.renewLock("expiring")).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("'app:expiring'").hasMessageContaining("lost")
                .hasCauseInstanceOf(LeaseLostException.class);
        assertThatThrownBy(expiring::unlock).isInstanceOf(ConcurrentModificationException.class);
    }

    @Test
    void keysAreNamedAfterTheRegistryKeyAndMustBeStrings() {
        RelockLockRegistry other = new RelockLockRegistry(clientA, "other");
        Lock lock = instanceA.obtain("job");
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
        // relock's lock has conditions, shared by every client (RelockCondition); the adapter passes them on
        assertThat(instanceA.obtain("job").newCondition()).isInstanceOf(RelockCondition.class);
    }

    @Test
    void expireUnusedOlderThanLeavesHeldLocksAlone() {
        Lock lock = instanceA.obtain("job");
        lock.lock();
        instanceA.expireUnusedOlderThan(0);
        assertThat(clientA.lock("app:job").isHeldByCurrentThread()).isTrue();
        lock.unlock();
    }

    /**
     * The registry's lock for {@code key}, held by this thread with a lease that is not renewed:
     * taken through relock, as 6.x users must (its {@code Lock} has no time-to-live); the
     * registry's lock is that very hold.
     */
    private static Lock lockWithLease(RelockClient client, RelockLockRegistry registry, String key, Duration lease) {
        client.lock(registry.lockName(key)).lock(lease.toMillis(), TimeUnit.MILLISECONDS);
        return registry.obtain(key);
    }
}
