package dev.relock.contract;

import static dev.relock.contract.Polling.soon;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

import dev.relock.LeaseState;
import dev.relock.LockHandle;
import dev.relock.PermitHandle;
import dev.relock.RelockClient;
import dev.relock.RelockLock;
import dev.relock.RelockReadWriteLock;
import dev.relock.RelockSemaphore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The asynchronous API, as every deployment must serve it: holds owned by their handle (any thread
 * closes them; never reentrant, with each other or with a thread's holds), every overload, waits that
 * end empty and leave the queue, cancellation that leaves nothing behind, and many waiting
 * acquisitions served first come, first served without a thread each.
 */
abstract class AsyncContract extends ContractBase {

    /** Waits for a stage no longer than {@link #HANG}. */
    static <T> T result(CompletionStage<T> stage) throws Exception {
        return resultOf(stage.toCompletableFuture());
    }

    @Test
    void aHandleOwnsItsHoldAnyThreadClosesItAndItExcludesThreadsAndOtherHandlesOfBothHalves() throws Exception {
        RelockClient client = newClient();
        RelockClient otherClient = newClient();
        RelockLock lock = client.lock("handle");
        LockHandle handle = result(lock.acquireAsync());
        assertThat(handle.isValid()).isTrue();
        assertThat(handle.fencingToken()).isPositive();
        assertThat(lock.isLocked()).isTrue();
        assertThat(otherClient.inspect("handle").holders().keySet()).singleElement().asString()
                .as("the owner of a handle's hold").startsWith(client.clientId() + ":h");
        assertThat(lock.isHeldByCurrentThread()).as("owned by the handle, not by a thread").isFalse();
        assertThat(lock.getHoldCount()).isZero();
        assertThat(lock.tryLock()).as("the thread does not re-enter a handle's hold").isFalse();
        assertThatThrownBy(lock::unlock).isInstanceOf(IllegalMonitorStateException.class);

        long start = System.nanoTime();
        CompletableFuture<Optional<LockHandle>> second =
                lock.tryAcquireAsync(Duration.ofMillis(300), Duration.ofSeconds(5)).toCompletableFuture();
        // a waiter of the holder's own client waits in that client (single server), or in Redis (Redlock)
        assertThat(resultOf(second)).as("a second handle of the same client waits like any other owner").isEmpty();
        assertThat(millisSince(start)).as("ms a 300 ms tryAcquireAsync waited").isGreaterThanOrEqualTo(250);
        // the withdraw is sent when the wait ends, without waiting for its reply
        soon("the timed-out acquisition left the queue").until(() -> otherClient.inspect("handle").waiters() == 0);
        assertThat(handle.isValid()).as("the holder after the timed-out wait").isTrue();

        CompletableFuture<Optional<LockHandle>> waiting =
                otherClient.lock("handle").tryAcquireAsync(HANG, Duration.ofSeconds(5)).toCompletableFuture();
        soon().until(() -> otherClient.inspect("handle").waiters() == 1);
        resultOf(inNewThread("closer", () -> {
            handle.close();
            return null;
        }));
        assertThat(handle.state()).isEqualTo(LeaseState.RELEASED);
        LockHandle next = resultOf(waiting).orElseThrow();
        assertThat(next.fencingToken()).isGreaterThan(handle.fencingToken());
        assertThat(otherClient.heldLocks()).singleElement().satisfies(held -> {
            assertThat(held.fencingToken()).isEqualTo(next.fencingToken());
            assertThat(held.renewed()).as("a hold with an explicit lease is not renewed").isFalse();
        });
        next.close();
        assertThat(lock.isLocked()).isFalse();

        // the other way round: a thread's hold keeps out a handle of the same client
        lock.lock();
        CompletableFuture<LockHandle> pending = lock.acquireAsync().toCompletableFuture();
        await("a handle while a thread of the same client holds").during(Duration.ofMillis(300))
                .atMost(Duration.ofSeconds(1)).until(() -> !pending.isDone());
        lock.unlock();
        LockHandle afterThread = resultOf(pending);
        assertThat(afterThread.isValid()).isTrue();
        afterThread.close();
        assertThat(lock.tryLock()).isTrue();
        lock.unlock();

        // both halves of a read-write lock
        RelockReadWriteLock mine = client.readWriteLock("async-rw");
        RelockReadWriteLock theirs = otherClient.readWriteLock("async-rw");
        LockHandle read1 = result(mine.readLock().acquireAsync());
        LockHandle read2 = result(theirs.readLock().acquireAsync());
        CompletableFuture<Optional<LockHandle>> writer = theirs.writeLock().tryAcquireAsync(HANG).toCompletableFuture();
        soon("the writer queued").until(() -> otherClient.inspect("async-rw").waiters() == 1);
        read1.close();
        assertThat(writer).as("one reader is still in").isNotDone();
        read2.close();
        LockHandle written = resultOf(writer).orElseThrow();
        assertThat(written.fencingToken()).isGreaterThan(read1.fencingToken()).isGreaterThan(read2.fencingToken());
        assertThat(result(mine.readLock().tryAcquireAsync(Duration.ZERO))).as("a reader while the writer holds").isEmpty();
        written.close();
    }

    @Test
    void manyAcquisitionsCancelledRightAwayLeaveNothingAndManyWaitingAreServedInArrivalOrderOneAtATime() throws Exception {
        RelockClient holderClient = newClient();
        // many cancelled right away
        RelockLock lock = holderClient.lock("cancel-race");
        int acquiredAnyway = 0;
        for (int i = 0; i < 200; i++) {
            CompletableFuture<LockHandle> acquiring = lock.acquireAsync().toCompletableFuture();
            if (!acquiring.cancel(false)) {
                // it won the race: the caller has the handle and closes it
                acquiring.join().close();
                acquiredAnyway++;
            }
        }
        // every cancelled acquisition either never took the lock or released it at once, in order;
        // the check after the test then finds nothing of theirs on any server
        soon().until(() -> !lock.isLocked() && holderClient.inspect("cancel-race").waiters() == 0);
        assertThat(acquiredAnyway).as("acquisitions that were done before their cancel").isLessThan(200);
        assertThat(lock.tryLock()).isTrue();
        lock.unlock();

        // many waiting at once, without a thread each
        String name = "async-fifo";
        List<RelockLock> locks = List.of(newClient().lock(name), newClient().lock(name), newClient().lock(name));
        int waiters = 30;
        LockHandle held = holderClient.lock(name).acquire();
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
                soon().until(() -> holderClient.inspect(name).waiters() == number + 1);
            }
            held.close();
            CompletableFuture.allOf(all.toArray(CompletableFuture[]::new))
                    .get(2 * HANG.toMillis(), TimeUnit.MILLISECONDS);
        } finally {
            work.shutdownNow();
        }
        assertThat(overlaps).as("handles that held the lock at once").hasValue(0);
        List<Integer> expected = new ArrayList<>();
        for (int i = 0; i < waiters; i++) {
            expected.add(i);
        }
        if (deployment().servesCloseArrivalsInExactOrder()) {
            assertThat(served).as("the order the waiting acquisitions were served in").isEqualTo(expected);
        } else {
            // waits that began a round trip apart: neighbours may swap, nobody is served far out of turn
            assertThat(served).as("the waiting acquisitions served").containsExactlyInAnyOrderElementsOf(expected);
            for (int position = 0; position < served.size(); position++) {
                assertThat(Math.abs(served.get(position) - position))
                        .as("how far out of arrival order %s was served, in %s", served.get(position), served)
                        .isLessThanOrEqualTo(2);
            }
        }
        if (deployment().servesCloseArrivalsInExactOrder()) {
            assertThat(holderClient.inspect(name).waiters()).isZero();
        } else {
            // on Redlock a waiter served by a majority may leave its mark on a node that did not grant it, until the
            // mark lapses or is cleaned (CI at 814c79b, Redis 6.2: one mark seen right after the last was served)
            soon().untilAsserted(() -> assertThat(holderClient.inspect(name).waiters()).isZero());
        }
    }

    @Test
    void semaphorePermitsAreAcquiredAsynchronously() throws Exception {
        assumeThat(deployment().servesSemaphores()).isTrue();
        RelockClient client = newClient();
        RelockSemaphore semaphore = client.semaphore("async-permits");
        RelockSemaphore other = newClient().semaphore("async-permits");
        assertThat(semaphore.trySetPermits(2)).isTrue();
        PermitHandle two = result(semaphore.acquireAsync(2));
        assertThat(two.permits()).isEqualTo(2);
        assertThat(result(other.tryAcquireAsync(1, Duration.ofMillis(200)))).isEmpty();
        CompletableFuture<Optional<PermitHandle>> waiting =
                other.tryAcquireAsync(1, HANG, Duration.ofSeconds(5)).toCompletableFuture();
        soon().until(() -> client.inspectSemaphore("async-permits").waiters() == 1);
        assertThat(waiting).isNotDone();
        resultOf(inNewThread("closer", () -> {
            two.close();
            return null;
        }));
        PermitHandle one = resultOf(waiting).orElseThrow();
        assertThat(one.fencingToken()).isGreaterThan(two.fencingToken());
        assertThat(semaphore.availablePermits()).isEqualTo(1);
        one.close();
        assertThat(semaphore.availablePermits()).isEqualTo(2);
        assertThatThrownBy(() -> semaphore.acquireAsync(0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must be positive");
    }
}
