package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Leases: an explicit lease ends by itself and lets the next waiter in, and its holder is told first, however
 * short the lease; the lease keeper renews holds without an explicit lease for as long as they are held, and only
 * those.
 */
class LeaseTest extends OneServerTestBase {

    @Test
    void anExplicitLeaseRunsOutAndTheNextClientTakesOver() throws Exception {
        List<LeaseLost> heard = new CopyOnWriteArrayList<>();
        // a short default lease only so the lease keeper looks every 200 ms; the hold below is explicit
        RelockLock first = newClient(b -> b.defaultLease(Duration.ofMillis(600)).leaseLostListener(heard::add))
                .lock("expiring");
        RelockLock second = newClient().lock("expiring");

        long start = System.nanoTime();
        first.lock(800, TimeUnit.MILLISECONDS);
        long firstToken = first.fencingToken().orElseThrow();
        assertThat(first.remainingLease()).hasValueSatisfying(left ->
                assertThat(left).isPositive().isLessThanOrEqualTo(Duration.ofMillis(800)));

        CountDownLatch letGo = new CountDownLatch(1);
        CompletableFuture<Long> acquiredAfter = new CompletableFuture<>();
        CompletableFuture<Void> secondDone = inNewThread("second", () -> {
            if (!second.tryLock(5, TimeUnit.SECONDS)) {
                acquiredAfter.complete(-1L);
                return null;
            }
            try {
                acquiredAfter.complete(millisSince(start));
                letGo.await();
                return null;
            } finally {
                second.unlock();
            }
        });
        // (on a slow machine the second may first ask only after the lease ran out)
        await().atMost(HANG).until(() -> queue("expiring").size() == 1 || acquiredAfter.isDone());

        // nobody releases: the second client gets the lock once the lease ran out in Redis
        long tookAfter = resultOf(acquiredAfter);
        assertThat(tookAfter).as("ms from the first lock() until the second client held it")
                .isGreaterThanOrEqualTo(750).isLessThan(5_000);
        assertThat(second.fencingToken().orElseThrow()).isGreaterThan(firstToken);

        // the first holder learns of the loss from its lease keeper, then from unlock
        await().atMost(HANG).until(() -> !heard.isEmpty());
        assertThat(heard).singleElement().satisfies(lost -> {
            assertThat(lost.lockName()).isEqualTo("expiring");
            assertThat(lost.fencingToken()).isEqualTo(firstToken);
        });
        assertThat(first.isHeldByCurrentThread()).isFalse();
        assertThatThrownBy(first::unlock).isInstanceOf(LeaseLostException.class).hasMessageContaining("expiring");
        assertThat(second.isLocked()).as("the first holder's unlock left the second's lock alone").isTrue();
        letGo.countDown();
        resultOf(secondDone);
        assertThat(second.isLocked()).isFalse();
    }

    @Test
    void unlockAfterAnExplicitLeaseRanOutThrowsLeaseLostEvenWithNoKeeperPassYet() {
        List<LeaseLost> heard = new CopyOnWriteArrayList<>();
        // default lease 30 s: the lease keeper does not look before the unlock below
        RelockLock lock = newClient(b -> b.leaseLostListener(heard::add)).lock("expired-unnoticed");
        lock.lock(100, TimeUnit.MILLISECONDS);
        await().atMost(HANG).until(() -> !lock.isLocked());
        assertThatThrownBy(lock::unlock).isInstanceOf(LeaseLostException.class);
        assertThat(heard).singleElement().extracting(LeaseLost::lockName).isEqualTo("expired-unnoticed");
        assertThat(lock.getHoldCount()).isZero();
    }

    @Test
    void anExplicitLeaseShorterThanTheKeepersPeriodHasItsOwnDeadline() throws Exception {
        List<LeaseLost> heard = new CopyOnWriteArrayList<>();
        // default lease 30 s: the lease keeper's passes come every 10 s, long after the 1 s lease below ends
        RelockLock first = newClient(b -> b.leaseLostListener(heard::add)).lock("short-explicit");
        RelockLock second = newClient().lock("short-explicit");

        LockHandle held = first.tryAcquire(Duration.ZERO, Duration.ofSeconds(1)).orElseThrow();
        AtomicLong toldAt = new AtomicLong();
        held.whenLost().thenRun(() -> toldAt.set(System.nanoTime()));
        Optional<LockHandle> theirs = second.tryAcquire(HANG);
        long acquiredAt = System.nanoTime();
        long told = toldAt.get();
        assertThat(theirs).as("the lease ran out in Redis").isPresent();
        theirs.get().close();

        assertThat(told).as("the holder was told before the second client got in").isNotZero();
        assertThat(told - acquiredAt).as("told before the second client got in").isNotPositive();
        assertThat(held.state()).isEqualTo(LeaseState.LOST);
        assertThatThrownBy(held::close).isInstanceOf(LeaseLostException.class);
        await().atMost(HANG).until(() -> !heard.isEmpty());
        assertThat(heard).singleElement().extracting(LeaseLost::fencingToken).isEqualTo(held.fencingToken());
    }

    @Test
    void remainingLeaseIsBetweenZeroAndTheLeaseWhoeverAsks() {
        RelockLock lock = newClient().lock("remaining");
        RelockLock observer = newClient().lock("remaining");
        assertThat(lock.remainingLease()).as("free lock").isEmpty();

        lock.lock(2, TimeUnit.SECONDS);
        try {
            assertThat(lock.remainingLease()).hasValueSatisfying(left ->
                    assertThat(left).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(2)));
            assertThat(observer.remainingLease()).hasValueSatisfying(left ->
                    assertThat(left).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(2)));
        } finally {
            lock.unlock();
        }
        assertThat(observer.remainingLease()).isEmpty();

        lock.lock();
        try {
            assertThat(lock.remainingLease()).as("the default lease of 30 s").hasValueSatisfying(left ->
                    assertThat(left).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(30)));
        } finally {
            lock.unlock();
        }
    }

    @Test
    void theLeaseKeeperKeepsAHeldLockThroughManyLeases() throws Exception {
        List<LeaseLost> heard = new CopyOnWriteArrayList<>();
        RelockClient holderClient = newClient(b -> b.defaultLease(Duration.ofMillis(600)).leaseLostListener(heard::add));
        RelockLock lock = holderClient.lock("kept");
        RelockLock other = newClient().lock("kept");

        long start = System.nanoTime();
        try (LockHandle held = lock.acquire()) {
            int checks = 0;
            // hold for more than three leases (renewed every 200 ms), looking every 100 ms
            while (millisSince(start) < 2_000) {
                assertThat(other.tryLock()).as("another client after %d ms", millisSince(start)).isFalse();
                assertThat(held.isValid()).isTrue();
                assertThat(lock.isHeldByCurrentThread()).isTrue();
                assertThat(lock.remainingLease()).hasValueSatisfying(left -> assertThat(left).isPositive());
                checks++;
                Thread.sleep(100);
            }
            assertThat(checks).isGreaterThan(8);
            assertThat(held.fencingToken()).isEqualTo(lock.fencingToken().orElseThrow());
        }
        assertThat(heard).as("leases lost").isEmpty();
        assertThat(other.tryLock()).isTrue();
        other.unlock();
    }

    @Test
    void explicitLeasesAreNotRenewed() throws Exception {
        List<LeaseLost> heard = new CopyOnWriteArrayList<>();
        // the lease keeper runs every 100 ms, yet must leave the explicit lease alone
        RelockLock lock = newClient(b -> b.defaultLease(Duration.ofMillis(300)).leaseLostListener(heard::add))
                .lock("not-renewed");

        long start = System.nanoTime();
        LockHandle held = lock.tryAcquire(Duration.ZERO, Duration.ofMillis(800)).orElseThrow();
        await().atMost(HANG).pollInterval(Duration.ofMillis(20)).until(() -> !lock.isLocked());
        assertThat(millisSince(start)).as("ms until the 800 ms lease ended").isGreaterThanOrEqualTo(750);

        LeaseLost lost = held.whenLost().toCompletableFuture().get(HANG.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(lost.lockName()).isEqualTo("not-renewed");
        assertThat(lost.fencingToken()).isEqualTo(held.fencingToken());
        assertThat(held.state()).isEqualTo(LeaseState.LOST);
        // the handle may hear of it a moment before the listener does
        await().atMost(HANG).until(() -> !heard.isEmpty());
        assertThat(heard).containsExactly(lost);
        assertThatThrownBy(held::close).isInstanceOf(LeaseLostException.class);
    }

    @Test
    void aLockWithAnExplicitLeaseMayBeReleasedEarly() {
        RelockLock lock = newClient().lock("released-early");
        RelockLock other = newClient().lock("released-early");
        lock.lock(10, TimeUnit.SECONDS);
        assertThat(other.tryLock()).isFalse();
        lock.unlock();
        assertThat(other.tryLock()).isTrue();
        other.unlock();
    }
}
