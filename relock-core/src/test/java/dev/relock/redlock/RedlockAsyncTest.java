package dev.relock.redlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.relock.LeaseState;
import dev.relock.LockHandle;
import dev.relock.RelockClient;
import dev.relock.RelockLock;
import io.netty.channel.EventLoop;
import io.netty.util.internal.ThreadExecutorMap;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Asynchronous acquisition and delayed release on Redlock over five servers, where they depend on
 * the Redlock engine: a woken acquisition is decided off the I/O threads, and {@code releaseAfter}
 * keeps the lock taken on a majority. What every deployment must do asynchronously is
 * {@code contract/AsyncContract}.
 */
class RedlockAsyncTest extends RedlockTestBase {

    @Override
    int nodeCount() {
        return 5;
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
