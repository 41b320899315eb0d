package dev.relock.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;

import dev.relock.LatchInfo;
import dev.relock.RelockClient;
import dev.relock.RelockCountDownLatch;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Count-down latches where the deployment serves them (one Redis: standalone, Sentinel, Cluster), and a clear
 * refusal where it does not (Redlock).
 */
abstract class LatchContract extends ContractBase {

    @Test
    void aDeploymentServesLatchesOrRefusesThemWithTheReason() {
        RelockClient client = newClient();
        if (!deployment().servesLatches()) {
            assertThatThrownBy(() -> client.countDownLatch("refused")).isInstanceOf(UnsupportedOperationException.class)
                    .hasMessageContaining("count-down latches");
            return;
        }
        RelockCountDownLatch latch = client.countDownLatch("served");
        assertThat(latch.getCount()).as("count of a latch never set").isZero();
        assertThat(latch.countDown()).as("count-down of a latch never set").isZero();
        assertThat(latch.inspect()).extracting(LatchInfo::count, LatchInfo::set).containsExactly(0L, false);
        assertThat(latch.trySetCount(2)).isTrue();
        assertThat(latch.trySetCount(5)).as("armed a second time before reaching zero").isFalse();
        assertThat(latch.getCount()).isEqualTo(2);
        LatchInfo info = latch.inspect();
        assertThat(info.set()).isTrue();
        assertThat(info.expiresIn()).isPositive().isLessThanOrEqualTo(RelockCountDownLatch.DEFAULT_IDLE_EXPIRY);
        assertThat(latch.countDown()).isEqualTo(1);
        assertThat(latch.countDown()).isZero();
        assertThat(latch.countDown()).as("count-down at zero").isZero();
        assertThat(latch.getCount()).isZero();
        assertThat(latch.trySetCount(1)).as("armed again once it reached zero").isTrue();
        assertThat(latch.getCount()).isEqualTo(1);

        assertThatThrownBy(() -> latch.trySetCount(0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'served'").hasMessageContaining("count");
        assertThatThrownBy(() -> latch.trySetCount(-1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> latch.trySetCount(1L << 60)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> latch.trySetCount(1, Duration.ZERO)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("idle expiry");
        assertThatThrownBy(() -> latch.trySetCount(1, null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> latch.await(1, null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> client.countDownLatch(" ")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> client.countDownLatch(null)).isInstanceOf(NullPointerException.class);
        assertThat(latch.getCount()).as("after the refused calls").isEqualTo(1);
    }

    @Test
    void reachingZeroWakesEveryWaiterOfEveryClient() throws Exception {
        assumeThat(deployment().servesLatches()).isTrue();
        RelockClient coordinator = newClient();
        assertThat(coordinator.countDownLatch("ready").trySetCount(3)).isTrue();
        List<RelockClient> clients = List.of(newClient(), newClient(), newClient());
        List<CompletableFuture<Boolean>> waits = new ArrayList<>();
        for (RelockClient client : clients) {
            for (int t = 0; t < 2; t++) {
                RelockCountDownLatch latch = client.countDownLatch("ready");
                waits.add(inNewThread("await", () -> latch.await(HANG.toMillis(), TimeUnit.MILLISECONDS)));
            }
        }
        // every waiting client has read the latch armed (so none returned early)
        Polling.soon().untilAsserted(() -> assertThat(coordinator.countDownLatch("ready").inspect().waitingClients())
                .containsExactlyInAnyOrderElementsOf(clients.stream().map(RelockClient::clientId).sorted().toList()));
        assertThat(coordinator.countDownLatch("ready").countDown()).isEqualTo(2);
        assertThat(clients.get(0).countDownLatch("ready").countDown()).isEqualTo(1);
        assertThat(waits).noneMatch(CompletableFuture::isDone);
        assertThat(clients.get(1).countDownLatch("ready").countDown()).isZero();
        for (CompletableFuture<Boolean> wait : waits) {
            assertThat(resultOf(wait)).as("await returned true: opened").isTrue();
        }
        assertThat(coordinator.countDownLatch("ready").inspect().waitingClients()).as("waiters once opened").isEmpty();
    }

    @Test
    void anAwaitWhoseTimeRunsOutReturnsFalseAndAZeroTimeoutOnlyReads() throws Exception {
        assumeThat(deployment().servesLatches()).isTrue();
        RelockCountDownLatch latch = newClient().countDownLatch("slow");
        assertThat(latch.await(Duration.ZERO)).as("a latch never set is open").isTrue();
        latch.trySetCount(1);
        assertThat(latch.await(Duration.ZERO)).isFalse();
        assertThat(latch.await(-5, TimeUnit.SECONDS)).isFalse();
        long start = System.nanoTime();
        assertThat(latch.await(Duration.ofMillis(200))).isFalse();
        assertThat(millisSince(start)).isBetween(150L, HANG.toMillis());
        assertThat(latch.getCount()).isEqualTo(1);
    }

    @Test
    void aWaiterOfARoundThatOpenedReturnsTrueAlsoWhenTheNextRoundIsArmed() throws Exception {
        assumeThat(deployment().servesLatches()).isTrue();
        RelockClient client = newClient();
        RelockCountDownLatch latch = client.countDownLatch("rounds");
        latch.trySetCount(1);
        CompletableFuture<Boolean> wait = inNewThread("await", () -> latch.await(HANG.toMillis(), TimeUnit.MILLISECONDS));
        Polling.soon().until(() -> !latch.inspect().waitingClients().isEmpty());
        // opened and armed again in one go: the waiter never sees count 0 in Redis, only the round's wake-up
        assertThat(newClient().countDownLatch("rounds").countDown()).isZero();
        assertThat(latch.trySetCount(4)).isTrue();
        assertThat(resultOf(wait)).isTrue();
    }

    @Test
    void anAsyncWaitOpensWithTheCountAndACancelledOneEnds() throws Exception {
        assumeThat(deployment().servesLatches()).isTrue();
        RelockCountDownLatch latch = newClient().countDownLatch("async");
        latch.trySetCount(1);
        CompletableFuture<Boolean> opened = latch.awaitAsync(HANG.multipliedBy(3)).toCompletableFuture();
        CompletableFuture<Boolean> cancelled = latch.awaitAsync(HANG.multipliedBy(3)).toCompletableFuture();
        Polling.soon().until(() -> !latch.inspect().waitingClients().isEmpty());
        assertThat(cancelled.cancel(false)).isTrue();
        assertThat(newClient().countDownLatch("async").countDown()).isZero();
        assertThat(resultOf(opened)).isTrue();
        assertThat(cancelled).isCancelled();
    }

    @Test
    void anInterruptedWaiterThrowsAndLeavesNoWaitBehind() throws Exception {
        assumeThat(deployment().servesLatches()).isTrue();
        RelockCountDownLatch latch = newClient().countDownLatch("interrupted");
        latch.trySetCount(1);
        CountDownLatch started = new CountDownLatch(1);
        Thread[] waiter = new Thread[1];
        CompletableFuture<Object> wait = inNewThread("await", () -> {
            waiter[0] = Thread.currentThread();
            started.countDown();
            latch.await();
            return "returned";
        });
        started.await();
        Polling.soon().until(() -> !latch.inspect().waitingClients().isEmpty());
        waiter[0].interrupt();
        assertThatThrownBy(() -> resultOf(wait)).isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(InterruptedException.class);
        assertThat(latch.countDown()).isZero();
    }

    @Test
    void aLatchThatExpiresBeforeReachingZeroFailsItsWaitersInsteadOfOpening() throws Exception {
        assumeThat(deployment().servesLatches()).isTrue();
        RelockCountDownLatch latch = newClient().countDownLatch("forgotten");
        assertThat(latch.trySetCount(2, Duration.ofMillis(300))).isTrue();
        CompletableFuture<Boolean> wait = inNewThread("await", () -> latch.await(HANG.toMillis(), TimeUnit.MILLISECONDS));
        assertThatThrownBy(() -> resultOf(wait)).isInstanceOf(ExecutionException.class)
                .cause().isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("'forgotten'").hasMessageContaining("expired");
        assertThat(latch.getCount()).as("count of the expired latch").isZero();
        assertThat(latch.inspect().set()).isFalse();
    }

    @Test
    void closingTheClientFailsItsWaiters() throws Exception {
        assumeThat(deployment().servesLatches()).isTrue();
        RelockClient client = newClient();
        RelockCountDownLatch latch = client.countDownLatch("closing");
        latch.trySetCount(1);
        CompletableFuture<Boolean> wait = inNewThread("await", () -> latch.await(HANG.toMillis(), TimeUnit.MILLISECONDS));
        Polling.soon().until(() -> !latch.inspect().waitingClients().isEmpty());
        client.close();
        assertThatThrownBy(() -> resultOf(wait)).isInstanceOf(ExecutionException.class)
                .cause().isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
        assertThatThrownBy(latch::countDown).isInstanceOf(IllegalStateException.class);
        // the closed client's count-down was refused: the count is still there for the others
        assertThat(newClient().countDownLatch("closing").countDown()).isZero();
    }
}
