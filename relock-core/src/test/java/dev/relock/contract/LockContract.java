package dev.relock.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.relock.LeaseLostException;
import dev.relock.LeaseState;
import dev.relock.LockHandle;
import dev.relock.RelockClient;
import dev.relock.RelockLock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The exclusive lock, as every deployment must serve it: exclusion, waiting, re-entry, ownership, leases. */
abstract class LockContract extends ContractBase {

    @Test
    void clientsExcludeEachOtherAndTokensRiseInCriticalSectionOrder() throws Exception {
        int perThread = 15;
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        int[] counter = {0}; // guarded by the lock only
        List<Long> tokens = new ArrayList<>(); // guarded by the lock only
        List<CompletableFuture<Void>> workers = new ArrayList<>();
        for (int c = 0; c < 3; c++) {
            RelockClient client = newClient();
            for (int t = 0; t < 2; t++) {
                workers.add(inNewThread("worker-" + c + "-" + t, () -> {
                    RelockLock lock = client.lock("contended");
                    for (int i = 0; i < perThread; i++) {
                        lock.lock();
                        try {
                            if (inside.incrementAndGet() != 1) {
                                overlaps.incrementAndGet();
                            }
                            tokens.add(lock.fencingToken().orElseThrow());
                            int seen = counter[0];
                            Thread.yield();
                            counter[0] = seen + 1;
                            inside.decrementAndGet();
                        } finally {
                            lock.unlock();
                        }
                    }
                    return null;
                }));
            }
        }
        for (CompletableFuture<Void> worker : workers) {
            worker.get(2 * HANG.toMillis(), TimeUnit.MILLISECONDS);
        }
        assertThat(overlaps).as("critical sections that overlapped").hasValue(0);
        assertThat(counter[0]).as("updates of a plain counter under the lock").isEqualTo(6 * perThread);
        assertThat(tokens).as("fencing tokens in critical-section order").isSorted().doesNotHaveDuplicates();
    }

    @Test
    void tryLockFailsWhileHeldElsewhereWaitsAtMostItsWaitAndLeavesNoWaiter() throws Exception {
        RelockLock holder = newClient().lock("try");
        RelockClient otherClient = newClient();
        RelockLock other = otherClient.lock("try");
        holder.lock();
        assertThat(other.tryLock()).isFalse();
        assertThat(other.tryAcquire(Duration.ZERO)).isEmpty();
        long start = System.nanoTime();
        assertThat(other.tryLock(300, TimeUnit.MILLISECONDS)).isFalse();
        assertThat(millisSince(start)).as("ms a 300 ms tryLock waited").isGreaterThanOrEqualTo(250).isLessThan(HANG.toMillis());
        await("the timed-out waiter left the queue").atMost(HANG).until(() -> otherClient.inspect("try").waiters() == 0);
        assertThat(holder.isHeldByCurrentThread()).isTrue();
        holder.unlock();
        assertThat(other.tryLock()).isTrue();
        other.unlock();
    }

    @Test
    void aWaiterIsWokenByTheReleaseLongBeforeItsWaitEnds() throws Exception {
        RelockLock holder = newClient().lock("woken");
        RelockClient waiterClient = newClient();
        LockHandle held = holder.acquire();
        CountDownLatch released = new CountDownLatch(1);
        long[] releasedAt = new long[1];
        CompletableFuture<Long> waited = inNewThread("waiter", () -> {
            RelockLock lock = waiterClient.lock("woken");
            if (!lock.tryLock(HANG.toMillis(), TimeUnit.MILLISECONDS)) {
                return -1L;
            }
            try {
                released.await();
                return millisSince(releasedAt[0]);
            } finally {
                lock.unlock();
            }
        });
        await().atMost(HANG).until(() -> waiterClient.inspect("woken").waiters() == 1);
        releasedAt[0] = System.nanoTime();
        held.close();
        released.countDown();
        // woken by the release, not by the end of the holder's 30 s lease
        assertThat(resultOf(waited)).as("ms from the release until the waiter held the lock")
                .isBetween(0L, HANG.toMillis() / 3);
        assertThat(held.state()).isEqualTo(LeaseState.RELEASED);
    }

    @Test
    void waitersOfDifferentClientsAcquireInArrivalOrder() throws Exception {
        RelockClient holderClient = newClient();
        RelockLock holder = holderClient.lock("fifo");
        holder.lock();
        List<String> order = new java.util.concurrent.CopyOnWriteArrayList<>();
        List<CompletableFuture<Void>> waiters = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            RelockClient client = newClient();
            String who = "waiter-" + i;
            waiters.add(inNewThread(who, () -> {
                RelockLock lock = client.lock("fifo");
                lock.lock();
                order.add(who);
                lock.unlock();
                return null;
            }));
            int queued = i + 1;
            await().atMost(HANG).until(() -> holderClient.inspect("fifo").waiters() == queued);
        }
        holder.unlock();
        for (CompletableFuture<Void> waiter : waiters) {
            resultOf(waiter);
        }
        assertThat(order).containsExactly("waiter-0", "waiter-1", "waiter-2");
    }

    @Test
    void reentryCountsHoldsKeepsTheTokenAndOnlyTheLastUnlockReleases() throws Exception {
        RelockLock lock = newClient().lock("reentrant");
        RelockLock other = newClient().lock("reentrant");
        lock.lock();
        long token = lock.fencingToken().orElseThrow();
        lock.lock();
        assertThat(lock.getHoldCount()).isEqualTo(2);
        assertThat(lock.fencingToken()).hasValue(token);
        lock.unlock();
        assertThat(lock.isHeldByCurrentThread()).isTrue();
        assertThat(other.tryLock()).as("another client while one hold is left").isFalse();
        assertThat(resultOf(inNewThread("same-client-other-thread", () -> lock.tryLock())).booleanValue())
                .as("another thread of the same client").isFalse();
        lock.unlock();
        assertThat(lock.getHoldCount()).isZero();
        assertThatThrownBy(lock::unlock).isInstanceOf(IllegalMonitorStateException.class);
        assertThat(other.tryLock()).isTrue();
        assertThat(other.fencingToken().orElseThrow()).isGreaterThan(token);
        other.unlock();
    }

    @Test
    void unlockByAnOwnerThatDoesNotHoldTheLockIsIllegalAndChangesNothing() throws Exception {
        RelockClient holderClient = newClient();
        RelockLock lock = holderClient.lock("owned");
        lock.lock();
        CompletableFuture<Void> otherThread = inNewThread("not-the-holder", () -> {
            lock.unlock();
            return null;
        });
        assertThatThrownBy(() -> resultOf(otherThread)).hasCauseInstanceOf(IllegalMonitorStateException.class);
        assertThatThrownBy(() -> newClient().lock("owned").unlock()).isInstanceOf(IllegalMonitorStateException.class);
        assertThat(lock.getHoldCount()).isEqualTo(1);
        assertThat(newClient().lock("owned").isLocked()).isTrue();
        lock.unlock();
        assertThat(lock.isLocked()).isFalse();
    }

    @Test
    void aHandleIsItsOwnOwnerAndMayBeClosedByAnotherThread() throws Exception {
        RelockLock lock = newClient().lock("handles");
        LockHandle first = lock.acquireAsync().toCompletableFuture().get(HANG.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(first.state()).isEqualTo(LeaseState.HELD);
        assertThat(lock.tryAcquireAsync(Duration.ofMillis(200)).toCompletableFuture()
                .get(HANG.toMillis(), TimeUnit.MILLISECONDS))
                .as("a second handle of the same client waits like any other owner").isEmpty();
        resultOf(inNewThread("closer", () -> {
            first.close();
            return null;
        }));
        assertThat(first.state()).isNotEqualTo(LeaseState.HELD);
        Optional<LockHandle> next = lock.tryAcquire(Duration.ZERO);
        assertThat(next).hasValueSatisfying(handle -> assertThat(handle.fencingToken()).isGreaterThan(first.fencingToken()));
        next.orElseThrow().close();
    }

    @Test
    void cancellingOrTimingOutAnAsynchronousWaitWithdrawsIt() throws Exception {
        RelockLock holder = newClient().lock("async");
        RelockClient waiterClient = newClient();
        RelockLock waiter = waiterClient.lock("async");
        LockHandle held = holder.acquire();
        assertThat(waiter.tryAcquireAsync(Duration.ofMillis(200)).toCompletableFuture()
                .get(HANG.toMillis(), TimeUnit.MILLISECONDS)).isEmpty();
        CompletableFuture<LockHandle> forever = waiter.acquireAsync().toCompletableFuture();
        await().atMost(HANG).until(() -> waiterClient.inspect("async").waiters() == 1);
        forever.cancel(true);
        await("the cancelled wait left the queue").atMost(HANG).until(() -> waiterClient.inspect("async").waiters() == 0);
        held.close();
        RelockLock third = newClient().lock("async");
        assertThat(third.tryLock()).as("nobody took the lock for the cancelled wait").isTrue();
        third.unlock();
    }

    @Test
    void closingAClientFailsItsPendingAcquisitionsAndTheyLeaveTheQueue() throws Exception {
        RelockClient holderClient = newClient();
        LockHandle held = holderClient.lock("closing").acquire();
        RelockClient closing = newClient();
        CompletableFuture<LockHandle> pending = closing.lock("closing").acquireAsync().toCompletableFuture();
        await().atMost(HANG).until(() -> holderClient.inspect("closing").waiters() == 1);
        closing.close();
        assertThatThrownBy(() -> pending.get(HANG.toMillis(), TimeUnit.MILLISECONDS))
                .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(IllegalStateException.class);
        await().atMost(HANG).until(() -> holderClient.inspect("closing").waiters() == 0);
        assertThatThrownBy(() -> closing.lock("closing")).isInstanceOf(IllegalStateException.class);
        held.close();
    }

    @Test
    void anInterruptEndsAnInterruptibleWaitAndTheWaiterLeavesTheQueue() throws Exception {
        RelockClient holderClient = newClient();
        RelockLock holder = holderClient.lock("interrupted");
        holder.lock();
        RelockClient waiterClient = newClient();
        Thread[] waiterThread = new Thread[1];
        CompletableFuture<Void> waiting = inNewThread("interruptible", () -> {
            waiterThread[0] = Thread.currentThread();
            waiterClient.lock("interrupted").lockInterruptibly();
            return null;
        });
        await().atMost(HANG).until(() -> holderClient.inspect("interrupted").waiters() == 1);
        waiterThread[0].interrupt();
        assertThatThrownBy(() -> resultOf(waiting)).hasCauseInstanceOf(InterruptedException.class);
        await().atMost(HANG).until(() -> holderClient.inspect("interrupted").waiters() == 0);
        assertThat(holder.isHeldByCurrentThread()).isTrue();
        holder.unlock();
    }

    @Test
    void theLeaseKeeperKeepsAHeldLockThroughManyLeases() throws Exception {
        RelockLock held = newClient(b -> b.defaultLease(Duration.ofMillis(600))).lock("kept");
        RelockLock other = newClient().lock("kept");
        LockHandle handle = held.acquire();
        assertThat(other.tryLock(2_000, TimeUnit.MILLISECONDS)).as("another client during three leases").isFalse();
        assertThat(handle.state()).isEqualTo(LeaseState.HELD);
        handle.close();
        assertThat(lost).isEmpty();
        assertThat(other.tryLock()).isTrue();
        other.unlock();
    }

    @Test
    void anExplicitLeaseRunsOutTheNextHolderGetsAGreaterTokenAndTheLateUnlockThrows() throws Exception {
        RelockLock first = newClient(b -> b.defaultLease(Duration.ofMillis(600))).lock("expiring");
        RelockLock second = newClient().lock("expiring");
        first.lock(500, TimeUnit.MILLISECONDS);
        long firstToken = first.fencingToken().orElseThrow();
        long start = System.nanoTime();
        assertThat(second.tryLock(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        assertThat(millisSince(start)).as("ms until the second client held it").isGreaterThanOrEqualTo(300);
        assertThat(second.fencingToken().orElseThrow()).isGreaterThan(firstToken);
        assertThatThrownBy(first::unlock).isInstanceOf(LeaseLostException.class).hasMessageContaining("expiring");
        // the listener may be told on another thread (Redlock reports losses off the I/O threads)
        await().atMost(HANG).untilAsserted(() -> assertThat(lost).anySatisfy(event -> {
            assertThat(event.lockName()).isEqualTo("expiring");
            assertThat(event.fencingToken()).isEqualTo(firstToken);
        }));
        assertThat(second.isLocked()).as("the late unlock left the new holder alone").isTrue();
        second.unlock();
    }

    @Test
    void releaseAfterKeepsTheLockTakenForTheDelay() throws Exception {
        RelockLock lock = newClient().lock("cooling");
        RelockLock other = newClient().lock("cooling");
        LockHandle handle = lock.acquire();
        long start = System.nanoTime();
        handle.releaseAfter(Duration.ofMillis(400));
        assertThat(other.tryLock()).as("right after releaseAfter").isFalse();
        assertThat(other.tryLock(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        assertThat(millisSince(start)).as("ms until another client held it").isGreaterThanOrEqualTo(300);
        other.unlock();
    }

    @Test
    void forceUnlockFreesTheLockAndTheFormerHolderLearnsItLost() throws Exception {
        RelockLock held = newClient(b -> b.defaultLease(Duration.ofMillis(900))).lock("forced");
        RelockLock operator = newClient().lock("forced");
        LockHandle handle = held.acquire();
        assertThat(operator.forceUnlock()).isTrue();
        assertThat(operator.isLocked()).isFalse();
        assertThat(operator.tryLock()).isTrue();
        await().atMost(HANG).until(() -> handle.state() == LeaseState.LOST);
        assertThat(handle.whenLost().toCompletableFuture()).isCompleted();
        // the state turns LOST before the listeners are told, on the thread that found the loss
        await().atMost(HANG).untilAsserted(() -> assertThat(lost).singleElement().satisfies(event -> {
            assertThat(event.lockName()).isEqualTo("forced");
            assertThat(event.fencingToken()).isEqualTo(handle.fencingToken());
        }));
        assertThatThrownBy(handle::close).isInstanceOf(LeaseLostException.class);
        assertThat(operator.isHeldByCurrentThread()).as("the new holder keeps the lock").isTrue();
        operator.unlock();
        assertThat(operator.forceUnlock()).as("force-unlocking a free lock").isFalse();
    }

    @Test
    void aHolderThatLostTheLockUnawaresStillFencesWithItsOwnTokenNotTheNextHolders() throws Exception {
        RelockLock stale = newClient().lock("fenced");
        RelockLock next = newClient().lock("fenced");
        stale.lock();
        long staleToken = stale.fencingToken().orElseThrow();
        // the hold vanishes in Redis; its owner's lease keeper has not looked yet (the default lease: 10 s)
        assertThat(newClient().lock("fenced").forceUnlock()).isTrue();
        assertThat(next.tryLock(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        long nextToken = next.fencingToken().orElseThrow();
        assertThat(nextToken).isGreaterThan(staleToken);
        assertThat(stale.fencingToken()).as("the token the stale holder writes with: a fenced resource refuses it")
                .hasValue(staleToken);
        assertThat(resultOf(inNewThread("outsider", () -> stale.fencingToken().orElseThrow())))
                .as("a thread that holds nothing sees the holder's token").isEqualTo(nextToken);
        next.unlock();
        assertThatThrownBy(stale::unlock).isInstanceOf(LeaseLostException.class);
    }

    @Test
    void badNamesAndLeasesAreRefusedWithWhatWasWrong() {
        RelockClient client = newClient();
        assertThatThrownBy(() -> client.lock(" ")).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("blank");
        assertThatThrownBy(() -> client.lock(null)).isInstanceOf(NullPointerException.class);
        RelockLock lock = client.lock("bad-lease");
        assertThatThrownBy(() -> lock.lock(0, TimeUnit.MILLISECONDS)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lease");
        assertThatThrownBy(() -> lock.tryAcquire(Duration.ZERO, Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lease");
        assertThat(lock.isLocked()).isFalse();
    }
}
