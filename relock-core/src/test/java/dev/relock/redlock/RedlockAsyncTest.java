package dev.relock.redlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.relock.LeaseState;
import dev.relock.LockHandle;
import dev.relock.RelockClient;
import dev.relock.RelockLock;
import dev.relock.RelockReadWriteLock;
import io.netty.channel.EventLoop;
import io.netty.util.internal.ThreadExecutorMap;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Asynchronous acquisition and delayed release on Redlock over five servers: handle-owned holds
 * that exclude each other and thread holds, waits that end empty, cancellation that withdraws
 * (nothing left on any node), close failing pending stages, and {@code releaseAfter}.
 */
class RedlockAsyncTest extends RedlockTestBase {

    @Override
    int nodeCount() {
        return 5;
    }

    @Test
    void aHandleAcquiredAsynchronouslyExcludesOthersAndIsClosedByAnotherThread() throws Exception {
        RelockClient client = newClient();
        RelockLock lock = client.lock("async");
        LockHandle handle = lock.acquireAsync().toCompletableFuture().get(HANG.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(handle.state()).isEqualTo(LeaseState.HELD);
        await().atMost(HANG).until(() -> nodesHolding("async") == 5);
        assertThat(holderOn(nodes.get(0), "async")).startsWith(client.clientId() + ":h");
        assertThat(lock.isHeldByCurrentThread()).as("a handle's hold is not the thread's").isFalse();
        assertThat(lock.tryLock()).as("the thread does not re-enter a handle's hold").isFalse();
        Optional<LockHandle> second = lock.tryAcquireAsync(Duration.ofMillis(100)).toCompletableFuture()
                .get(HANG.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(second).as("handles are not reentrant with each other").isEmpty();

        CompletableFuture<Optional<LockHandle>> waiting = newClient().lock("async")
                .tryAcquireAsync(HANG, Duration.ofSeconds(5)).toCompletableFuture();
        resultOf(inNewThread("closer", () -> {
            handle.close();
            return null;
        }));
        LockHandle next = resultOf(waiting).orElseThrow();
        assertThat(next.fencingToken()).isGreaterThan(handle.fencingToken());
        next.close();
    }

    @Test
    void aWaitingAcquisitionIsHandledOffTheIoThreads() throws Exception {
        // a command sent on a Netty I/O thread overtakes those queued on that loop: a next attempt could reach a
        // node before the same owner's release and be granted the old hold, which the release then deletes
        RelockLock held = newClient().lock("woken");
        held.lock();
        CompletableFuture<Boolean> completedOnIo = newClient().lock("woken").acquireAsync().toCompletableFuture()
                .thenApply(handle -> {
                    boolean onIo = ThreadExecutorMap.currentExecutor() instanceof EventLoop;
                    handle.close();
                    return onIo;
                });
        held.unlock();
        // woken by the release's message and decided by the nodes' replies, both on I/O threads
        assertThat(completedOnIo.get(HANG.toMillis(), TimeUnit.MILLISECONDS)).isFalse();
    }

    @Test
    void aTimedOutWaitCompletesEmptyAndCancellingAWaitWithdrawsIt() throws Exception {
        RelockLock holder = newClient().lock("async-cancel");
        RelockLock waiter = newClient().lock("async-cancel");
        holder.lock();
        Optional<LockHandle> none = waiter.tryAcquireAsync(Duration.ofMillis(150)).toCompletableFuture()
                .get(HANG.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(none).isEmpty();

        CompletableFuture<LockHandle> waiting = waiter.acquireAsync().toCompletableFuture();
        assertThat(waiting.cancel(false)).isTrue();
        holder.unlock();
        // the cancelled acquisition never takes the lock: another thread gets it, and it stays free after
        RelockLock third = newClient().lock("async-cancel");
        assertThat(third.tryLock(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        third.unlock();
        await().atMost(HANG).until(() -> nodesHolding("async-cancel") == 0);
    }

    @Test
    void cancellingRightAwayLeavesNothingOnAnyNode() throws Exception {
        RelockLock lock = newClient().lock("async-race");
        for (int i = 0; i < 20; i++) {
            CompletableFuture<LockHandle> acquiring = lock.acquireAsync().toCompletableFuture();
            if (!acquiring.cancel(false)) {
                acquiring.join().close();
            }
        }
        // every cancelled acquisition either never took the lock or was cleaned up, in order
        await().atMost(HANG).until(() -> nodesHolding("async-race") == 0);
        assertThat(lock.tryLock()).isTrue();
        lock.unlock();
    }

    @Test
    void readAndWriteHalvesAcquireAsynchronously() throws Exception {
        RelockReadWriteLock mine = newClient().readWriteLock("async-rw");
        RelockReadWriteLock theirs = newClient().readWriteLock("async-rw");
        LockHandle read1 = mine.readLock().acquireAsync().toCompletableFuture().get(HANG.toMillis(), TimeUnit.MILLISECONDS);
        LockHandle read2 = theirs.readLock().acquireAsync().toCompletableFuture().get(HANG.toMillis(), TimeUnit.MILLISECONDS);
        CompletableFuture<Optional<LockHandle>> writer = theirs.writeLock().tryAcquireAsync(HANG).toCompletableFuture();
        read1.close();
        assertThat(writer).as("one reader is still in").isNotDone();
        read2.close();
        LockHandle written = resultOf(writer).orElseThrow();
        assertThat(mine.readLock().tryAcquireAsync(Duration.ZERO).toCompletableFuture()
                .get(HANG.toMillis(), TimeUnit.MILLISECONDS)).isEmpty();
        written.close();
    }

    @Test
    void closingTheClientFailsPendingStages() throws Exception {
        RelockLock holder = newClient().lock("async-close");
        RelockClient client = RelockClient.builder().redlockUris(uris()).build();
        holder.lock();
        List<CompletableFuture<LockHandle>> pending = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            pending.add(client.lock("async-close").acquireAsync().toCompletableFuture());
        }
        client.close();
        for (CompletableFuture<LockHandle> stage : pending) {
            assertThatThrownBy(() -> stage.get(HANG.toMillis(), TimeUnit.MILLISECONDS))
                    .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("closed");
        }
        holder.unlock();
    }

    @Test
    void releaseAfterKeepsTheLockTakenForTheDelayOnAMajority() throws Exception {
        RelockClient client = newClient();
        RelockLock lock = client.lock("after");
        RelockLock other = newClient().lock("after");
        LockHandle held = lock.acquire();
        long released = System.nanoTime();
        held.releaseAfter(Duration.ofMillis(600));
        assertThat(held.state()).isEqualTo(LeaseState.RELEASED);
        assertThat(lock.isHeldByCurrentThread()).isFalse();
        assertThat(other.tryLock()).as("still taken for the delay").isFalse();
        assertThat(other.tryLock(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        assertThat(millisSince(released)).as("free only once the delay ran out").isGreaterThanOrEqualTo(550);
        other.unlock();

        RelockLock read = client.readWriteLock("after-read").readLock();
        LockHandle reading = read.acquire();
        reading.releaseAfter(Duration.ofMillis(300));
        RelockLock writer = newClient().readWriteLock("after-read").writeLock();
        assertThat(writer.tryLock()).isFalse();
        assertThat(writer.tryLock(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        writer.unlock();
        await().atMost(HANG).until(() -> nodesHolding("after") == 0);
    }
}
