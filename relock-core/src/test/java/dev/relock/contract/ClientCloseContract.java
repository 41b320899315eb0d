package dev.relock.contract;

import static dev.relock.contract.Polling.soon;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.relock.LeaseState;
import dev.relock.LockHandle;
import dev.relock.RelockClient;
import dev.relock.RelockLock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Closing a client, as every deployment must do it: what the client held is free at once, what it
 * waited for fails with {@link IllegalStateException} and leaves the queue, and whatever is asked of
 * it afterwards is refused; closing again does nothing.
 */
abstract class ClientCloseContract extends ContractBase {

    @Test
    void closeReleasesTheHoldsFailsTheWaitsRefusesWorkAfterwardsAndIsIdempotent() throws Exception {
        RelockClient holderClient = newClient();
        LockHandle held = holderClient.lock("closing").acquire();
        RelockClient closing = newClient();

        // what the closing client holds: a re-entered lock, a handle, a lock of a thread that ended
        RelockLock reentered = closing.lock("released-by-close-1");
        RelockLock byHandle = closing.lock("released-by-close-2");
        RelockLock byEndedThread = closing.lock("released-by-close-3");
        reentered.lock();
        reentered.lock();
        LockHandle handle = byHandle.acquire();
        resultOf(inNewThread("holder", () -> {
            byEndedThread.lock();
            return null; // the thread ends without unlocking
        }));

        // what it waits for: a lock held by another client
        RelockLock waiting = closing.lock("closing");
        CompletableFuture<LockHandle> forever = waiting.acquireAsync().toCompletableFuture();
        CompletableFuture<Optional<LockHandle>> bounded =
                waiting.tryAcquireAsync(Duration.ofSeconds(60)).toCompletableFuture();
        CompletableFuture<Void> thread = inNewThread("waiter-of-closed-client", () -> {
            waiting.lock();
            waiting.unlock();
            return null;
        });
        soon().until(() -> holderClient.inspect("closing").waiters() == 3);
        // not awaited into the queue: the close may find it in its first attempt
        CompletableFuture<LockHandle> justStarted = waiting.acquireAsync().toCompletableFuture();

        closing.close();
        closing.close();
        for (String name : List.of("released-by-close-1", "released-by-close-2", "released-by-close-3")) {
            RelockLock lock = holderClient.lock(name);
            assertThat(lock.tryLock()).as("'%s' right after close", name).isTrue();
            lock.unlock();
        }
        for (CompletableFuture<?> pending : List.of(forever, bounded, justStarted)) {
            assertThatThrownBy(() -> pending.get(HANG.toMillis(), TimeUnit.MILLISECONDS))
                    .isInstanceOf(ExecutionException.class)
                    .hasCauseInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("closed");
        }
        // woken by the close, not by the end of a wait (the thread's has none)
        assertThatThrownBy(() -> thread.get(5, TimeUnit.SECONDS))
                .hasCauseInstanceOf(IllegalStateException.class)
                .cause().hasMessageContaining("closed");
        await("the closed client's waiters left the queue").atMost(Duration.ofSeconds(5))
                .pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(10))
                .until(() -> holderClient.inspect("closing").waiters() == 0);
        held.close();
        RelockLock newcomer = holderClient.lock("closing");
        assertThat(newcomer.tryLock()).as("the lock right after its release, nobody alive in line").isTrue();
        newcomer.unlock();

        assertThat(handle.isValid()).isFalse();
        assertThat(handle.state()).isEqualTo(LeaseState.RELEASED);
        assertThat(reentered.isHeldByCurrentThread()).isFalse();
        assertThat(reentered.getHoldCount()).as("holds after close released them").isZero();
        assertThatCode(closing::close).doesNotThrowAnyException();

        assertThatThrownBy(() -> closing.lock("closed")).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
        RelockLock before = byHandle; // made before the close, holding nothing now
        assertThatThrownBy(before::lock).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(before::tryLock).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> before.tryLock(1, TimeUnit.SECONDS)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(before::lockInterruptibly).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(before::acquire).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> before.tryAcquire(Duration.ZERO)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(before::acquireAsync).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> before.tryAcquireAsync(Duration.ZERO)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(before::unlock).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(before::isLocked).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(before::remainingLease).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(before::fencingToken).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(before::forceUnlock).isInstanceOf(IllegalStateException.class);
        assertThat(before.isHeldByCurrentThread()).isFalse();
        assertThat(before.getHoldCount()).isZero();
        assertThatThrownBy(closing::ping).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
    }

    @Test
    void acquisitionsCaughtInTheirFirstStepsByCloseLeaveNoWaiterBehind() throws Exception {
        RelockClient holderClient = newClient();
        LockHandle held = holderClient.lock("closing-early").acquire();
        // each round: acquisitions whose first attempt, its reply and the wake-up listening that follows run
        // while close() marks the client closed and walks its waiting room; not one may stay in the queue
        for (int round = 0; round < 8; round++) {
            RelockClient closing = newClient();
            RelockLock waiting = closing.lock("closing-early");
            List<CompletableFuture<?>> started = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                started.add(waiting.acquireAsync().toCompletableFuture());
                started.add(waiting.tryAcquireAsync(Duration.ofSeconds(60)).toCompletableFuture());
            }
            if (round % 2 == 1) {
                // not a synchronisation: odd rounds let the first replies (and the listening they start) meet the
                // close at other points than the even ones, where the close follows the sends at once
                Thread.sleep(round);
            }
            closing.close();
            for (CompletableFuture<?> acquisition : started) {
                assertThatThrownBy(() -> acquisition.get(HANG.toMillis(), TimeUnit.MILLISECONDS))
                        .hasCauseInstanceOf(IllegalStateException.class);
            }
            int round0 = round;
            await("round " + round0 + ": the closed client's waiters left the queue").atMost(Duration.ofSeconds(5))
                    .pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(10))
                    .until(() -> holderClient.inspect("closing-early").waiters() == 0);
        }
        held.close();
    }
}
