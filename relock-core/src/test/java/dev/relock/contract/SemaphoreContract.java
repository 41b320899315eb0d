package dev.relock.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

import dev.relock.LeaseLostException;
import dev.relock.PermitHandle;
import dev.relock.RelockClient;
import dev.relock.RelockSemaphore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Semaphores where the deployment serves them, and a clear refusal where it does not (Redlock: a permit
 * count cannot be agreed by majority without a lock of its own, as {@code RelockClient} documents).
 */
abstract class SemaphoreContract extends ContractBase {

    @Test
    void aDeploymentServesSemaphoresOrRefusesThemWithTheReason() {
        RelockClient client = newClient();
        if (deployment().servesSemaphores()) {
            RelockSemaphore semaphore = client.semaphore("served");
            assertThat(semaphore.trySetPermits(1)).isTrue();
            assertThat(semaphore.availablePermits()).isEqualTo(1);
            assertThat(client.inspectSemaphore("served").permits()).isEqualTo(1);
        } else {
            assertThatThrownBy(() -> client.semaphore("refused")).isInstanceOf(UnsupportedOperationException.class)
                    .hasMessageContaining("semaphores");
            assertThatThrownBy(() -> client.inspectSemaphore("refused")).isInstanceOf(UnsupportedOperationException.class)
                    .hasMessageContaining("semaphores");
        }
    }

    @Test
    void neverMorePermitsOutThanSetAcrossClientsAndThreads() throws Exception {
        assumeThat(deployment().servesSemaphores()).isTrue();
        assertThat(newClient().semaphore("pool").trySetPermits(3)).isTrue();
        AtomicInteger out = new AtomicInteger();
        AtomicInteger mostOut = new AtomicInteger();
        List<CompletableFuture<Void>> workers = new ArrayList<>();
        for (int c = 0; c < 3; c++) {
            RelockSemaphore semaphore = newClient().semaphore("pool");
            for (int t = 0; t < 2; t++) {
                int permits = 1 + t;
                workers.add(inNewThread("worker-" + c + "-" + t, () -> {
                    for (int i = 0; i < 8; i++) {
                        try (PermitHandle held = semaphore.acquire(permits)) {
                            mostOut.accumulateAndGet(out.addAndGet(permits), Math::max);
                            Thread.yield();
                            out.addAndGet(-permits);
                        }
                    }
                    return null;
                }));
            }
        }
        for (CompletableFuture<Void> worker : workers) {
            worker.get(4 * HANG.toMillis(), TimeUnit.MILLISECONDS);
        }
        assertThat(mostOut.get()).as("most permits out at once").isBetween(1, 3);
        assertThat(newClient().semaphore("pool").availablePermits()).isEqualTo(3);
    }

    @Test
    void closingAHandleGivesThePermitsBackAndWakesAWaiterAndADeadHoldersComeBackAtTheirLeaseEnd() throws Exception {
        assumeThat(deployment().servesSemaphores()).isTrue();
        RelockClient client = newClient();
        RelockSemaphore semaphore = client.semaphore("handed");
        semaphore.trySetPermits(1);
        PermitHandle held = semaphore.acquire(1);
        RelockSemaphore other = newClient().semaphore("handed");
        CompletableFuture<PermitHandle> waiter = inNewThread("waiter", () -> other.acquire(1));
        await().atMost(HANG).until(() -> client.inspectSemaphore("handed").waiters() == 1);
        held.close();
        PermitHandle next = resultOf(waiter);
        assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
        next.close();

        // not renewed, as if its holder had died: an explicit lease of 400 ms
        PermitHandle dead = semaphore.tryAcquire(1, Duration.ZERO, Duration.ofMillis(400)).orElseThrow();
        Optional<PermitHandle> after = resultOf(inNewThread("after-the-lease", () -> other.tryAcquire(1, HANG)));
        assertThat(after).as("the permit came back after the lease").isPresent();
        after.orElseThrow().close();
        assertThatThrownBy(dead::close).isInstanceOf(LeaseLostException.class);
    }
}
