package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** tryLock and tryAcquire: a lost race is a value, the wait is honoured, a release wakes a waiter at once. */
class TryLockTest extends OneServerTestBase {

    @Test
    void tryLockWithoutWaitFailsWhileHeldElsewhereAndSucceedsWhenFree() {
        RelockLock holder = newClient().lock("busy");
        RelockLock other = newClient().lock("busy");

        assertThat(holder.tryLock()).isTrue();
        try {
            assertThat(other.tryLock()).isFalse();
            assertThat(other.getHoldCount()).isZero();
            assertThat(queue("busy")).as("a try without wait does not queue").isEmpty();
        } finally {
            holder.unlock();
        }
        assertThat(other.tryLock()).isTrue();
        other.unlock();
    }

    @Test
    void tryLockWithWaitGivesUpAfterItsWaitAndLeavesTheQueue() throws Exception {
        RelockLock holder = newClient().lock("timed-out");
        RelockClient otherClient = newClient();
        RelockLock other = otherClient.lock("timed-out");
        holder.lock();
        try {
            long start = System.nanoTime();
            assertThat(other.tryLock(300, TimeUnit.MILLISECONDS)).isFalse();
            long elapsed = millisSince(start);
            assertThat(elapsed).isGreaterThanOrEqualTo(300).isLessThan(300 + 3_000);
            // the withdrawal is sent without waiting for its reply
            await().atMost(HANG).until(() -> queue("timed-out").isEmpty());
            assertThat(other.getHoldCount()).isZero();
        } finally {
            holder.unlock();
        }
    }

    @Test
    void negativeOrZeroWaitTriesOnceWithoutQueueing() throws Exception {
        RelockLock holder = newClient().lock("once");
        RelockLock other = newClient().lock("once");
        holder.lock();
        try {
            long start = System.nanoTime();
            assertThat(other.tryLock(-1, TimeUnit.SECONDS)).isFalse();
            assertThat(other.tryLock(0, TimeUnit.SECONDS)).isFalse();
            assertThat(other.tryLock(Long.MIN_VALUE, TimeUnit.NANOSECONDS)).isFalse();
            assertThat(other.tryAcquire(Duration.ofSeconds(-5))).isEmpty();
            assertThat(millisSince(start)).as("four single attempts").isLessThan(3_000);
            assertThat(queue("once")).isEmpty();
        } finally {
            holder.unlock();
        }
        assertThat(other.tryLock(-1, TimeUnit.SECONDS)).as("a single attempt on a free lock").isTrue();
        other.unlock();
    }

    @Test
    void tryAcquireReturnsAHandleOrEmpty() throws Exception {
        RelockLock lock = newClient().lock("optional");
        RelockLock other = newClient().lock("optional");

        Optional<LockHandle> first = lock.tryAcquire(Duration.ofSeconds(1));
        assertThat(first).isPresent();
        LockHandle held = first.orElseThrow();
        try {
            assertThat(held.name()).isEqualTo("optional");
            assertThat(held.isValid()).isTrue();
            assertThat(held.state()).isEqualTo(LeaseState.HELD);
            assertThat(lock.fencingToken()).hasValue(held.fencingToken());
            assertThat(held.whenLost().toCompletableFuture()).isNotDone();

            assertThat(other.tryAcquire(Duration.ofMillis(100))).isEmpty();
            assertThat(other.tryAcquire(Duration.ZERO)).isEmpty();
            assertThat(other.tryAcquire(Duration.ofMillis(100), Duration.ofSeconds(5))).isEmpty();
        } finally {
            held.close();
        }
        assertThat(held.state()).isEqualTo(LeaseState.RELEASED);
        assertThat(held.whenLost().toCompletableFuture()).as("released, never lost").isNotDone();
        assertThat(lock.isLocked()).isFalse();

        try (LockHandle next = other.tryAcquire(Duration.ZERO).orElseThrow()) {
            assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
        }
    }

    @Test
    void hugeWaitsDoNotOverflow() throws Exception {
        RelockLock lock = newClient().lock("forever");
        assertThat(lock.tryLock(Long.MAX_VALUE, TimeUnit.DAYS)).isTrue();
        lock.unlock();
        Optional<LockHandle> handle = lock.tryAcquire(ChronoUnit.FOREVER.getDuration());
        assertThat(handle).isPresent();
        handle.orElseThrow().close();
        assertThat(lock.tryAcquire(ChronoUnit.FOREVER.getDuration(), ChronoUnit.FOREVER.getDuration())).hasValueSatisfying(
                h -> {
                    assertThat(lock.remainingLease()).hasValueSatisfying(
                            left -> assertThat(left).isGreaterThan(Duration.ofDays(365)));
                    h.close();
                });

        // and a waiter with an endless wait is still woken by a release
        RelockLock other = newClient().lock("forever");
        lock.lock();
        CompletableFuture<Boolean> waiter = inNewThread("endless-waiter", () -> {
            boolean got = other.tryLock(Long.MAX_VALUE, TimeUnit.NANOSECONDS);
            if (got) {
                other.unlock();
            }
            return got;
        });
        await().atMost(HANG).until(() -> queue("forever").size() == 1);
        lock.unlock();
        assertThat(waiter.get(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
    }

    @Test
    void tryLockDoesNotJumpAQueuedWaiter() throws Exception {
        RelockClient client = newClient();
        RelockLock lock = client.lock("no-jumping");
        // a waiter of some other client, queued and not yet expired, but whose client never takes its
        // turn (as if it had crashed): written the way acquire.lua queues a waiter, with server time
        String absent = "00000000000000000000000000000000:1";
        admin().zadd(queueKey("no-jumping"), serverMillis() * 1000.0, absent);
        admin().hset("relock:{no-jumping}:expiry", absent, Long.toString(serverMillis() + 60_000));
        admin().pexpire(queueKey("no-jumping"), 60_000);
        admin().pexpire("relock:{no-jumping}:expiry", 60_000);

        assertThat(lock.isLocked()).isFalse();
        assertThat(lock.tryLock()).as("free, but somebody is in line").isFalse();

        // a waiter is served once the absent head's entry has expired
        admin().hset("relock:{no-jumping}:expiry", absent, Long.toString(serverMillis() + 500));
        long start = System.nanoTime();
        assertThat(lock.tryLock(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        try {
            assertThat(millisSince(start)).isLessThan(HANG.toMillis());
            assertThat(queue("no-jumping")).isEmpty();
        } finally {
            lock.unlock();
        }
    }

    private long serverMillis() {
        List<String> time = admin().time();
        return Long.parseLong(time.get(0)) * 1000 + Long.parseLong(time.get(1)) / 1000;
    }
}
