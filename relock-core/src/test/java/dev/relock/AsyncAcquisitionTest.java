package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.relock.testredis.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The asynchronous API: handles owned by the handle (any thread closes them, never reentrant),
 * timeouts that complete with empty, cancellation that leaves nothing behind in Redis, closing the
 * client, and many waiting acquisitions that are served first come, first served without a thread
 * each.
 */
class AsyncAcquisitionTest extends OneServerTestBase {

    /** Waits for a stage no longer than {@link #HANG}. */
    private static <T> T result(CompletionStage<T> stage) throws Exception {
        return stage.toCompletableFuture().get(HANG.toMillis(), TimeUnit.MILLISECONDS);
    }

    @Test
    void aHandleAcquiredAsynchronouslyIsClosedByAnotherThread() throws Exception {
        RelockLock lock = newClient().lock("async-any-thread");
        LockHandle handle = result(lock.acquireAsync());
        assertThat(handle.isValid()).isTrue();
        assertThat(handle.fencingToken()).isPositive();
        assertThat(lock.isLocked()).isTrue();
        assertThat(lock.isHeldByCurrentThread()).as("owned by the handle, not by a thread").isFalse();

        resultOf(inNewThread("closer", () -> {
            handle.close();
            return null;
        }));
        assertThat(handle.state()).isEqualTo(LeaseState.RELEASED);
        assertThat(lock.isLocked()).isFalse();
    }

    @Test
    void handlesAreNotReentrantWithEachOther() throws Exception {
        RelockLock lock = newClient().lock("async-not-reentrant");
        LockHandle first = result(lock.tryAcquireAsync(Duration.ZERO)).orElseThrow();
        long start = System.nanoTime();
        Optional<LockHandle> second = result(lock.tryAcquireAsync(Duration.ofMillis(300)));
        assertThat(second).as("a second handle of the same client waits like any other owner").isEmpty();
        assertThat(millisSince(start)).isGreaterThanOrEqualTo(250);
        // the withdraw is sent when the wait ends, without waiting for its reply
        await("the timed-out acquisition left the queue").atMost(HANG).until(() -> queue("async-not-reentrant").isEmpty());
        first.close();
        LockHandle third = result(lock.tryAcquireAsync(Duration.ZERO)).orElseThrow();
        assertThat(third.fencingToken()).isGreaterThan(first.fencingToken());
        third.close();
    }

    @Test
    void threadHoldsAndHandleHoldsExcludeEachOther() throws Exception {
        RelockLock lock = newClient().lock("async-vs-thread");
        lock.lock();
        assertThat(result(lock.tryAcquireAsync(Duration.ofMillis(200)))).isEmpty();
        CompletableFuture<LockHandle> waiting = lock.acquireAsync().toCompletableFuture();
        await().atMost(HANG).until(() -> queue("async-vs-thread").size() == 1);
        assertThat(waiting).isNotDone();
        lock.unlock();
        LockHandle handle = waiting.get(HANG.toMillis(), TimeUnit.MILLISECONDS);

        assertThat(lock.tryLock(200, TimeUnit.MILLISECONDS)).as("the thread is not the handle's owner").isFalse();
        assertThatThrownBy(lock::unlock).isInstanceOf(IllegalMonitorStateException.class);
        handle.close();
        assertThat(lock.tryLock()).isTrue();
        lock.unlock();
    }

    @Test
    void aTimedOutWaitCompletesWithEmptyAndLeavesTheQueue() throws Exception {
        RelockLock holder = newClient().lock("async-timeout");
        RelockLock waiter = newClient().lock("async-timeout");
        try (LockHandle held = holder.acquire()) {
            CompletableFuture<Optional<LockHandle>> waiting =
                    waiter.tryAcquireAsync(Duration.ofMillis(500), Duration.ofSeconds(5)).toCompletableFuture();
            await().atMost(HANG).until(() -> queue("async-timeout").size() == 1);
            assertThat(waiting.get(HANG.toMillis(), TimeUnit.MILLISECONDS)).isEmpty();
            // the withdraw is sent when the wait ends, without waiting for its reply
            await().atMost(HANG).until(() -> queue("async-timeout").isEmpty());
            assertThat(held.isValid()).isTrue();
        }
    }

    @Test
    void cancellingRightAwayLeavesNoHoldBehind() throws Exception {
        RelockLock lock = newClient().lock("async-cancel-race");
        int acquiredAnyway = 0;
        for (int i = 0; i < 200; i++) {
            CompletableFuture<LockHandle> acquiring = lock.acquireAsync().toCompletableFuture();
            if (!acquiring.cancel(false)) {
                // it won the race: the caller has the handle and closes it
                acquiring.join().close();
                acquiredAnyway++;
            }
        }
        // every cancelled acquisition either never took the lock or released it at once, in order
        await().atMost(HANG).until(() -> !lock.isLocked() && queue("async-cancel-race").isEmpty());
        assertThat(acquiredAnyway).isLessThan(200);
        assertThat(lock.tryLock()).isTrue();
        lock.unlock();
    }

    @Test
    void closingTheClientFailsPendingStages() throws Exception {
        RelockLock holder = newClient().lock("async-close");
        RelockClient closing = newClient();
        LockHandle held = holder.acquire();
        CompletableFuture<LockHandle> forever = closing.lock("async-close").acquireAsync().toCompletableFuture();
        CompletableFuture<Optional<LockHandle>> bounded =
                closing.lock("async-close").tryAcquireAsync(Duration.ofSeconds(60)).toCompletableFuture();
        await().atMost(HANG).until(() -> queue("async-close").size() == 2);
        closing.close();
        for (CompletableFuture<?> pending : List.of(forever, bounded)) {
            assertThatThrownBy(() -> pending.get(HANG.toMillis(), TimeUnit.MILLISECONDS))
                    .isInstanceOf(ExecutionException.class)
                    .hasCauseInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("closed");
        }
        await().atMost(HANG).until(() -> queue("async-close").isEmpty());
        assertThatThrownBy(() -> closing.lock("async-close"))
                .isInstanceOf(IllegalStateException.class);
        held.close();
    }

    @Test
    void manyWaitingAcquisitionsAreServedInArrivalOrderOneAtATime() throws Exception {
        String name = "async-fifo";
        RelockLock holder = newClient().lock(name);
        List<RelockLock> locks = List.of(newClient().lock(name), newClient().lock(name), newClient().lock(name));
        int waiters = 30;
        LockHandle held = holder.acquire();
        List<Integer> served = new CopyOnWriteArrayList<>();
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        List<CompletableFuture<Void>> all = new ArrayList<>();
        ExecutorService work = Executors.newFixedThreadPool(4);
        try {
            for (int i = 0; i < waiters; i++) {
                int number = i;
                all.add(locks.get(i % locks.size()).acquireAsync().thenAcceptAsync(handle -> {
                    if (inside.incrementAndGet() != 1) {
                        overlaps.incrementAndGet();
                    }
                    served.add(number);
                    inside.decrementAndGet();
                    handle.close();
                }, work).toCompletableFuture());
                // the next one arrives only after this one is queued, so the order is known
                await().atMost(HANG).until(() -> queue(name).size() == number + 1);
            }
            held.close();
            CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(HANG.toMillis(), TimeUnit.MILLISECONDS);
        } finally {
            work.shutdownNow();
        }
        assertThat(overlaps.get()).isZero();
        List<Integer> expected = new ArrayList<>();
        for (int i = 0; i < waiters; i++) {
            expected.add(i);
        }
        assertThat(served).isEqualTo(expected);
        assertThat(queue(name)).isEmpty();
    }

    @Test
    void semaphorePermitsAreAcquiredAsynchronously() throws Exception {
        RelockSemaphore semaphore = newClient().semaphore("async-permits");
        RelockSemaphore other = newClient().semaphore("async-permits");
        assertThat(semaphore.trySetPermits(2)).isTrue();
        PermitHandle two = result(semaphore.acquireAsync(2));
        assertThat(two.permits()).isEqualTo(2);
        assertThat(result(other.tryAcquireAsync(1, Duration.ofMillis(200)))).isEmpty();
        CompletableFuture<Optional<PermitHandle>> waiting =
                other.tryAcquireAsync(1, HANG, Duration.ofSeconds(5)).toCompletableFuture();
        assertThat(waiting).isNotDone();
        resultOf(inNewThread("closer", () -> {
            two.close();
            return null;
        }));
        PermitHandle one = waiting.get(HANG.toMillis(), TimeUnit.MILLISECONDS).orElseThrow();
        assertThat(semaphore.availablePermits()).isEqualTo(1);
        one.close();
        assertThat(semaphore.availablePermits()).isEqualTo(2);
        assertThatThrownBy(() -> semaphore.acquireAsync(0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must be positive");
    }

    @Test
    void whileRedisIsDownBoundedWaitsFailAndUnboundedOnesRetry() throws Exception {
        Duration commandTimeout = Duration.ofMillis(500);
        try (RedisServer server = RedisServer.start();
                RelockClient client = RelockClient.builder().redisUri(server.uri())
                        // a short lease: waiters try again (and meet the outage) within a second
                        .defaultLease(Duration.ofSeconds(1))
                        .commandTimeout(commandTimeout).build()) {
            RelockLock lock = client.lock("async-down");
            LockHandle held = lock.acquire();
            CompletableFuture<Optional<LockHandle>> bounded =
                    lock.tryAcquireAsync(Duration.ofSeconds(60)).toCompletableFuture();
            CompletableFuture<LockHandle> unbounded = lock.acquireAsync().toCompletableFuture();
            await().atMost(HANG).until(() -> server.execute("ZCARD", queueKey("async-down")).equals("2"));
            server.kill();
            try {
                assertThatThrownBy(() -> bounded.get(HANG.toMillis(), TimeUnit.MILLISECONDS))
                        .isInstanceOf(ExecutionException.class)
                        .hasCauseInstanceOf(RedisUnavailableException.class)
                        .hasMessageContaining("'async-down'");
                await().during(commandTimeout.multipliedBy(3)).atMost(HANG).until(() -> !unbounded.isDone());
            } finally {
                server.restart();
            }
            // the restarted server lost the old hold (no persistence): the retrying waiter gets the lock
            LockHandle taken = unbounded.get(HANG.multipliedBy(2).toMillis(), TimeUnit.MILLISECONDS);
            assertThat(taken.isValid()).isTrue();
            taken.close();
            assertThatThrownBy(held::close).isInstanceOf(LeaseLostException.class);
        }
    }

    @Test
    void anUncontendedAcquisitionIsOneScriptCall() throws Exception {
        RelockLock lock = newClient().lock("async-one-call");
        // the first call of a fresh server may load the script (NOSCRIPT, then EVAL)
        assertThat(lock.tryLock()).isTrue();
        lock.unlock();
        List<Long> calls = new ArrayList<>();
        long before = scriptCalls();
        assertThat(lock.tryLock()).isTrue();
        calls.add(scriptCalls() - before);
        lock.unlock();
        before = scriptCalls();
        assertThat(lock.tryLock(5, TimeUnit.SECONDS)).isTrue();
        calls.add(scriptCalls() - before);
        lock.unlock();
        before = scriptCalls();
        lock.lock();
        calls.add(scriptCalls() - before);
        lock.unlock();
        before = scriptCalls();
        LockHandle handle = result(lock.tryAcquireAsync(Duration.ofSeconds(5))).orElseThrow();
        calls.add(scriptCalls() - before);
        handle.close();
        assertThat(calls).as("script calls of tryLock(), tryLock(wait), lock(), tryAcquireAsync(wait)")
                .containsExactly(1L, 1L, 1L, 1L);
    }

    @Test
    void badArgumentsAreRefusedAtOnce() {
        RelockLock lock = newClient().lock("async-bad-input");
        assertThatThrownBy(() -> lock.tryAcquireAsync(null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("wait");
        assertThatThrownBy(() -> lock.tryAcquireAsync(Duration.ZERO, Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lease of lock 'async-bad-input' must be positive");
        assertThatThrownBy(() -> lock.tryAcquireAsync(Duration.ZERO, null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("lease");
    }
}
