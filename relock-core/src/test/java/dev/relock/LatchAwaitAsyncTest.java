package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.relock.internal.engine.IoThreads;
import dev.relock.testredis.TcpProxy;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.channel.DefaultEventLoopGroup;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@link RelockCountDownLatch#awaitAsync}: a wait that no thread sits in, completed by the latch's wake-up, its
 * timeout or a cancel, which ends it (its registration, subscription and timers) without blocking the cancelling
 * thread. What every topology shares is in contract/LatchContract.
 */
@Tag("redis")
class LatchAwaitAsyncTest extends OneServerTestBase {

    @Test
    void manyAsyncWaitsOpenWithoutAThreadEach() throws Exception {
        RelockCountDownLatch latch = newClient().countDownLatch("nightly");
        latch.trySetCount(1);
        int threadsBefore = ManagementFactory.getThreadMXBean().getThreadCount();
        List<CompletableFuture<Boolean>> waits = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            waits.add(latch.awaitAsync(HANG.multipliedBy(3)).toCompletableFuture());
        }
        await().atMost(HANG).until(() -> !latch.inspect().waitingClients().isEmpty());
        assertThat(ManagementFactory.getThreadMXBean().getThreadCount()).as("threads while 300 waits wait")
                .isLessThan(threadsBefore + 30);
        assertThat(waits).noneMatch(CompletableFuture::isDone);
        assertThat(newClient().countDownLatch("nightly").countDown()).isZero();
        for (CompletableFuture<Boolean> wait : waits) {
            assertThat(resultOf(wait)).isTrue();
        }
    }

    @Test
    void anAsyncWaitWhoseTimeRunsOutCompletesFalseAndAZeroTimeoutOnlyReads() throws Exception {
        RelockCountDownLatch latch = newClient().countDownLatch("late");
        latch.trySetCount(2);
        long start = System.nanoTime();
        assertThat(resultOf(latch.awaitAsync(Duration.ofMillis(200)).toCompletableFuture())).isFalse();
        assertThat(millisSince(start)).isGreaterThanOrEqualTo(200);
        assertThat(resultOf(latch.awaitAsync(Duration.ZERO).toCompletableFuture())).isFalse();
        assertThat(resultOf(newClient().countDownLatch("unset").awaitAsync(Duration.ZERO).toCompletableFuture()))
                .as("a latch never set is open").isTrue();
        assertThatThrownBy(() -> latch.awaitAsync(null)).isInstanceOf(NullPointerException.class);
    }

    @Test
    void cancellingAnAsyncWaitEndsItAndALaterOpeningCompletesNothing() throws Exception {
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        RelockCountDownLatch latch = newClient(builder -> builder.meterRegistry(meters)).countDownLatch("cancelled");
        CompletableFuture<Boolean> wait = waitingFor(latch);
        assertThat(wait.cancel(false)).isTrue();
        // over when cancel returned: the wait left the client's waits and its timers, and was told to the metrics
        assertThat(meters.get("relock.latch.wait").tag("outcome", "cancelled").timer().count()).isEqualTo(1);
        assertThat(latch.countDown()).isZero();
        assertThat(wait).isCancelled();
        assertThat(meters.get("relock.latch.wait").timer().count()).as("waits ended").isEqualTo(1);
    }

    @Test
    void anAsyncWaitCancelledOnANettyIoThreadEndsWithoutBlockingIt() throws Exception {
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        CompletableFuture<Boolean> wait = waitingFor(newClient(builder -> builder.meterRegistry(meters))
                .countDownLatch("io"));
        // a Netty event loop of its own, as a channel's is: a reply's callback would run there only if it was
        // attached before the reply came (under load it often is not, and runs on the caller's thread)
        DefaultEventLoopGroup loop = new DefaultEventLoopGroup(1);
        try {
            CompletableFuture<Boolean> cancelledOnIo = CompletableFuture.supplyAsync(
                    () -> IoThreads.isCurrent() && wait.cancel(false), loop.next());
            assertThat(resultOf(cancelledOnIo)).as("cancelled on a Netty I/O thread").isTrue();
        } finally {
            loop.shutdownGracefully(0, 2, TimeUnit.SECONDS);
        }
        assertThat(wait).isCancelled();
        await().atMost(HANG).until(() -> meters.find("relock.latch.wait").tag("outcome", "cancelled").timer() != null);
    }

    @Test
    void anAsyncWaitWhoseWakeUpWasLostToACutOpensOnceItsClientIsBack() throws Exception {
        try (TcpProxy proxy = TcpProxy.to(redis)) {
            RelockCountDownLatch latch = newClient(builder -> builder.redisUri(proxy.uri())
                    .commandTimeout(Duration.ofMillis(500))).countDownLatch("cut");
            latch.trySetCount(1);
            CompletableFuture<Boolean> wait = latch.awaitAsync(Duration.ofSeconds(60)).toCompletableFuture();
            await().atMost(HANG).until(() -> !latch.inspect().waitingClients().isEmpty());
            proxy.rejectNew(true);
            proxy.cutConnections();
            // opened while the waiter's client is cut off: its wake-up reaches nobody
            assertThat(newClient().countDownLatch("cut").countDown()).isZero();
            proxy.rejectNew(false);
            assertThat(wait.get(40, TimeUnit.SECONDS)).isTrue();
        }
    }

    @Test
    void anAsyncWaitOfAClosedClientFails() throws Exception {
        RelockClient client = newClient();
        RelockCountDownLatch latch = client.countDownLatch("closing");
        latch.trySetCount(1);
        CompletionStage<Boolean> wait = latch.awaitAsync(HANG);
        await().atMost(HANG).until(() -> !latch.inspect().waitingClients().isEmpty());
        client.close();
        assertThatThrownBy(() -> resultOf(wait.toCompletableFuture())).isInstanceOf(ExecutionException.class)
                .cause().isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
        assertThatThrownBy(() -> latch.awaitAsync(HANG)).isInstanceOf(IllegalStateException.class);
        assertThat(newClient().countDownLatch("closing").countDown()).isZero();
    }

    @Test
    void anInterruptedBlockingWaitIsOverBeforeItThrows() throws Exception {
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        RelockCountDownLatch latch = newClient(builder -> builder.meterRegistry(meters)).countDownLatch("interrupted");
        latch.trySetCount(1);
        Thread[] waiter = new Thread[1];
        CompletableFuture<Object> wait = inNewThread("await", () -> {
            waiter[0] = Thread.currentThread();
            try {
                return latch.await(HANG.toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                // ended, and told, before the exception
                return meters.get("relock.latch.wait").tag("outcome", "interrupted").timer().count();
            }
        });
        await().atMost(HANG).until(() -> !latch.inspect().waitingClients().isEmpty() && waiter[0] != null);
        waiter[0].interrupt();
        assertThat(resultOf(wait)).isEqualTo(1L);
    }

    /** An async wait for {@code latch}, set to 1, once it has read the latch. */
    private static CompletableFuture<Boolean> waitingFor(RelockCountDownLatch latch) {
        latch.trySetCount(1);
        CompletableFuture<Boolean> wait = latch.awaitAsync(HANG).toCompletableFuture();
        await().atMost(HANG).until(() -> !latch.inspect().waitingClients().isEmpty());
        return wait;
    }
}
