package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Leased permits across clients: the bound, expiry of dead holders, release on close, wake-up. */
class SemaphoreTest extends OneServerTestBase {

    @Test
    void neverMorePermitsOutThanSetAcrossClientsAndThreads() throws Exception {
        assertThat(newClient().semaphore("pool").trySetPermits(3)).isTrue();
        AtomicInteger out = new AtomicInteger();
        AtomicInteger mostOut = new AtomicInteger();
        AtomicInteger acquisitions = new AtomicInteger();
        List<CompletableFuture<Void>> workers = new ArrayList<>();
        for (int c = 0; c < 3; c++) {
            RelockSemaphore semaphore = newClient().semaphore("pool");
            for (int t = 0; t < 3; t++) {
                int permits = 1 + (t % 2);
                workers.add(inNewThread("worker-" + c + "-" + t, () -> {
                    for (int i = 0; i < 10; i++) {
                        try (PermitHandle held = semaphore.acquire(permits)) {
                            mostOut.accumulateAndGet(out.addAndGet(permits), Math::max);
                            acquisitions.incrementAndGet();
                            Thread.sleep(2); // on purpose: hold a while so holders overlap
                            out.addAndGet(-permits);
                        }
                    }
                    return null;
                }));
            }
        }
        for (CompletableFuture<Void> worker : workers) {
            worker.get(60, TimeUnit.SECONDS);
        }
        assertThat(acquisitions).hasValue(90);
        assertThat(mostOut.get()).as("most permits out at once").isBetween(2, 3);
        assertThat(newClient().semaphore("pool").availablePermits()).isEqualTo(3);
    }

    @Test
    void permitsOfADeadHolderComeBackWhenTheirLeaseEnds() throws Exception {
        RelockSemaphore semaphore = newClient().semaphore("leased");
        semaphore.trySetPermits(2);
        // not renewed, as if the holder had died: an explicit lease of 500 ms
        PermitHandle dead = semaphore.tryAcquire(2, Duration.ZERO, Duration.ofMillis(500)).orElseThrow();
        assertThat(semaphore.availablePermits()).isZero();
        RelockSemaphore other = newClient().semaphore("leased");
        Optional<PermitHandle> after = resultOf(inNewThread("waiter", () -> other.tryAcquire(1, HANG)));
        assertThat(after).as("permits came back after the lease").isPresent();
        assertThat(after.get().fencingToken()).isGreaterThan(dead.fencingToken());
        after.get().close();
        assertThatThrownBy(dead::close).isInstanceOf(LeaseLostException.class);
    }

    @Test
    void closingAHandleGivesThePermitsBackAndWakesAWaiter() throws Exception {
        RelockSemaphore semaphore = newClient().semaphore("handed");
        semaphore.trySetPermits(1);
        PermitHandle held = semaphore.acquire(1);
        RelockSemaphore other = newClient().semaphore("handed");
        CompletableFuture<PermitHandle> waiter = inNewThread("waiter", () -> other.acquire(1));
        await().atMost(HANG).until(() -> admin().zcard("relock:{handed}:sem:queue") == 1);
        assertThat(waiter).isNotDone();
        held.close();
        held.close(); // a second close does nothing
        PermitHandle next = resultOf(waiter);
        assertThat(next.permits()).isEqualTo(1);
        assertThat(next.isValid()).isTrue();
        assertThat(held.state()).isEqualTo(LeaseState.RELEASED);
        next.close();
        assertThat(semaphore.availablePermits()).isEqualTo(1);
    }

    @Test
    void aRenewedHolderKeepsItsPermitsAcrossLeases() throws Exception {
        RelockSemaphore semaphore = newClient(b -> b.defaultLease(Duration.ofMillis(600))).semaphore("renewed");
        semaphore.trySetPermits(1);
        try (PermitHandle held = semaphore.acquire(1)) {
            Thread.sleep(1_800); // on purpose: three leases, kept only by renewals
            assertThat(held.isValid()).isTrue();
            assertThat(newClient().semaphore("renewed").tryAcquire(1, Duration.ZERO)).isEmpty();
        }
    }

    @Test
    void permitsCanBeSetOnceAndChanged() {
        RelockSemaphore semaphore = newClient().semaphore("counted");
        assertThatThrownBy(semaphore::availablePermits).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("trySetPermits");
        assertThatThrownBy(() -> semaphore.acquire(1)).isInstanceOf(IllegalStateException.class);
        assertThat(semaphore.trySetPermits(2)).isTrue();
        assertThat(semaphore.trySetPermits(5)).isFalse();
        assertThat(semaphore.addPermits(3)).isEqualTo(5);
        assertThat(semaphore.addPermits(-1)).isEqualTo(4);
        assertThatThrownBy(() -> semaphore.addPermits(-5)).isInstanceOf(IllegalStateException.class);
        assertThat(semaphore.availablePermits()).isEqualTo(4);
        admin().del("relock:{counted}:sem");
    }

    @Test
    void badInputIsRefusedClearly() {
        RelockSemaphore semaphore = newClient().semaphore("bad-input");
        semaphore.trySetPermits(2);
        assertThatThrownBy(() -> semaphore.trySetPermits(-1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> semaphore.acquire(0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("positive");
        assertThatThrownBy(() -> semaphore.tryAcquire(-1, Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> semaphore.tryAcquire(3, Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("fewer than 3");
        assertThatThrownBy(() -> semaphore.tryAcquire(1, Duration.ZERO, Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> newClient().semaphore(" ")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> newClient().semaphore(null)).isInstanceOf(NullPointerException.class);
        admin().del("relock:{bad-input}:sem");
    }

    /**
     * Review finding (issue 12, part 3): a waiter answered "you ask for more permits than the semaphore has now"
     * (permits were taken away while it waited) failed without leaving the queue, and its entry, at the head,
     * kept everyone behind it waiting until it expired (the 30 s hand-off turn the release gave it here).
     */
    @Test
    void aWaiterRefusedAfterPermitsWereTakenAwayLeavesTheQueue() throws Exception {
        // the release gives the woken head a 30 s turn: an entry left behind would hold up the queue that long
        RelockSemaphore owner = newClient(builder -> builder.handoffGrace(Duration.ofSeconds(30))).semaphore("shrunk");
        assertThat(owner.trySetPermits(2)).isTrue();
        PermitHandle both = owner.acquire(2);
        RelockClient waiting = newClient();
        CompletableFuture<PermitHandle> two = waiting.semaphore("shrunk").acquireAsync(2).toCompletableFuture();
        await().atMost(HANG).until(() -> waiting.inspectSemaphore("shrunk").waiters() == 1);

        owner.addPermits(-1); // one permit in all now: the waiter can never have two
        both.close(); // wakes it; its next attempt is refused
        assertThat(two).failsWithin(HANG).withThrowableThat().havingRootCause()
                .isInstanceOf(IllegalArgumentException.class).withMessageContaining("fewer than 2");
        await().atMost(HANG).until(() -> waiting.inspectSemaphore("shrunk").waiters() == 0);
        long asked = System.nanoTime();
        Optional<PermitHandle> one = newClient().semaphore("shrunk").tryAcquire(1, HANG);
        assertThat(one).as("a permit for the next in line").isPresent();
        assertThat(millisSince(asked)).as("ms the next in line waited").isLessThan(5_000);
        one.get().close();
    }
}
