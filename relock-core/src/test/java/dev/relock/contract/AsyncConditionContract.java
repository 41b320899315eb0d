package dev.relock.contract;

import static dev.relock.contract.Polling.soon;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;

import dev.relock.LeaseState;
import dev.relock.LockHandle;
import dev.relock.RelockClient;
import dev.relock.RelockCondition;
import dev.relock.RelockLock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;

/**
 * {@link RelockCondition#awaitAsync}, where the deployment serves conditions: a handle's await, which no thread sits
 * in, keeps the promises of a thread's: a signal reaches it, a timeout completes it with the lock held again by the
 * handle, and a cancel never loses a signal that picked it (it is passed on to the next waiter). A thread's await is
 * {@link ConditionContract}.
 */
abstract class AsyncConditionContract extends ContractBase {

    @BeforeEach
    void onlyWhereConditionsAreServed() {
        assumeThat(deployment().servesConditions()).isTrue();
    }

    @Test
    void aSignalReachesAnAsyncAwaiterWhoseHandleHoldsTheLockAgainWithAGreaterToken() throws Exception {
        RelockLock lock = newClient().lock("order");
        RelockCondition paid = lock.newCondition("paid");
        LockHandle held = handleOf(lock);
        long before = held.fencingToken();
        CompletableFuture<Boolean> awaited = paid.awaitAsync(held, HANG.multipliedBy(3)).toCompletableFuture();
        soon().until(() -> paid.waiters().size() == 1);
        assertThat(held.state()).as("the handle's state while it waits").isEqualTo(LeaseState.RELEASED);
        RelockLock signaller = newClient().lock("order");
        assertThat(resultOf(inNewThread("signaller", () -> {
            signaller.lock();
            try {
                signaller.newCondition("paid").signal();
            } finally {
                signaller.unlock();
            }
            return true;
        }))).isTrue();
        assertThat(resultOf(awaited)).as("signalled").isTrue();
        assertThat(held.isValid()).isTrue();
        assertThat(held.fencingToken()).isGreaterThan(before);
        assertThat(lock.remainingLease()).isPresent();
        assertThat(newClient().lock("order").tryLock()).as("another client while the handle holds it").isFalse();
        held.close();
        assertThat(lock.isLocked()).isFalse();
    }

    @Test
    void anAsyncAwaitWhoseTimeRunsOutCompletesFalseWithTheLockHeldByTheHandle() throws Exception {
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        RelockLock lock = newClient(builder -> builder.meterRegistry(meters)).lock("order");
        LockHandle held = handleOf(lock);
        long start = System.nanoTime();
        assertThat(resultOf(lock.newCondition().awaitAsync(held, Duration.ofMillis(200)).toCompletableFuture()))
                .isFalse();
        assertThat(millisSince(start)).isGreaterThanOrEqualTo(200);
        assertThat(held.isValid()).isTrue();
        assertThat(lock.newCondition().waiters()).isEmpty();
        RelockLock other = newClient().lock("order");
        assertThat(other.tryLock()).as("another client while the handle holds it again").isFalse();
        held.extendLease(Duration.ofSeconds(60));
        held.close();
        assertThat(other.tryLock()).isTrue();
        other.unlock();
        assertThat(meters.get("relock.condition.wait").tag("outcome", "timeout").timer().count()).isEqualTo(1);
    }

    /**
     * The lost-signal check: a signal picks the first of two waiters, whose caller cancels its await right after.
     * The cancelled await takes the lock back only to signal the next waiter in its place; without that the second
     * waiter would wait out its whole minute, as a signal consumed by a waiter nobody listens to any more is lost.
     */
    @Test
    void cancellingAnAsyncAwaitThatASignalPickedPassesTheSignalOnToTheNextWaiter() throws Exception {
        RelockLock lock = newClient().lock("queue");
        RelockCondition notEmpty = lock.newCondition("notEmpty");
        LockHandle first = handleOf(lock);
        CompletableFuture<Boolean> firstAwait = notEmpty.awaitAsync(first, Duration.ofSeconds(60)).toCompletableFuture();
        soon().until(() -> notEmpty.waiters().size() == 1);
        RelockLock secondLock = newClient().lock("queue");
        CompletableFuture<Boolean> second = inNewThread("second", () -> {
            secondLock.lock();
            try {
                return secondLock.newCondition("notEmpty").await(60, TimeUnit.SECONDS);
            } finally {
                secondLock.unlock();
            }
        });
        soon().until(() -> notEmpty.waiters().size() == 2);
        RelockLock signaller = newClient().lock("queue");
        assertThat(resultOf(inNewThread("signaller", () -> {
            signaller.lock();
            try {
                signaller.newCondition("notEmpty").signal(); // picks the first: it joined first
                assertThat(notEmpty.waiters()).hasSize(1);
                // the first's caller gives up, its signal taken, while the signaller still holds the lock
                return firstAwait.cancel(false);
            } finally {
                signaller.unlock();
            }
        }))).isTrue();
        assertThat(second.get(HANG.toSeconds(), TimeUnit.SECONDS)).as("the second waiter was signalled").isTrue();
        assertThat(first.isValid()).as("the cancelled await's handle").isFalse();
        soon().until(() -> !lock.isLocked());
    }

    /** A cancel before any signal leaves the wait set: the next signal goes to the waiter still there. */
    @Test
    void anAsyncAwaitCancelledBeforeASignalLeavesTheWaitSetAndTheHandleHoldsNothing() throws Exception {
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        RelockLock lock = newClient(builder -> builder.meterRegistry(meters)).lock("queue");
        RelockCondition notEmpty = lock.newCondition("notEmpty");
        LockHandle first = handleOf(lock);
        CompletableFuture<Boolean> firstAwait = notEmpty.awaitAsync(first, Duration.ofSeconds(60)).toCompletableFuture();
        soon().until(() -> notEmpty.waiters().size() == 1);
        assertThat(firstAwait.cancel(false)).isTrue();
        soon().until(() -> notEmpty.waiters().isEmpty());
        soon().until(() -> meters.find("relock.condition.wait").tag("outcome", "cancelled").timer() != null);
        assertThat(first.state()).isEqualTo(LeaseState.RELEASED);
        assertThat(lock.isLocked()).isFalse();
        first.close(); // nothing to give up
        assertThatThrownBy(() -> notEmpty.awaitAsync(first, HANG)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
    }

    /** Cancels racing signals at random moments: whichever comes first, the second waiter always gets a signal. */
    @RepeatedTest(8)
    void aCancelThatRacesASignalLosesNoSignal() throws Exception {
        RelockLock lock = newClient().lock("race");
        RelockCondition ready = lock.newCondition();
        LockHandle first = handleOf(lock);
        CompletableFuture<Boolean> firstAwait = ready.awaitAsync(first, Duration.ofSeconds(60)).toCompletableFuture();
        soon().until(() -> ready.waiters().size() == 1);
        RelockLock secondLock = newClient().lock("race");
        LockHandle second = handleOf(secondLock);
        CompletableFuture<Boolean> secondAwait = secondLock.newCondition().awaitAsync(second, Duration.ofSeconds(60))
                .toCompletableFuture();
        soon().until(() -> ready.waiters().size() == 2);
        RelockLock signaller = newClient().lock("race");
        long delayMicros = (long) (Math.random() * 3000);
        CompletableFuture<Boolean> cancelled = inNewThread("canceller", () -> {
            // a random moment against the signal's, not a synchronisation
            LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(delayMicros));
            return firstAwait.cancel(false);
        });
        LockHandle signalling = handleOf(signaller);
        signaller.newCondition().signal(signalling);
        signalling.close();
        resultOf(cancelled);
        // the first was signalled and honoured it (its cancel came too late), or the second got the signal: first-hand
        // or passed on by the cancelled first
        boolean firstTookIt = firstAwait.isDone() && !firstAwait.isCancelled() && resultOf(firstAwait);
        if (firstTookIt) {
            assertThat(first.isValid()).isTrue();
            first.close();
            assertThat(secondAwait).isNotDone();
            secondAwait.cancel(false);
        } else {
            assertThat(secondAwait.get(HANG.toSeconds(), TimeUnit.SECONDS)).as("the second waiter").isTrue();
            assertThat(second.isValid()).isTrue();
            second.close();
        }
        soon().until(() -> !lock.isLocked());
    }

    @Test
    void closingTheHandleWhileItAwaitsCancelsTheAwait() throws Exception {
        RelockLock lock = newClient().lock("order");
        RelockCondition condition = lock.newCondition();
        LockHandle held = handleOf(lock);
        CompletableFuture<Boolean> awaited = condition.awaitAsync(held, HANG.multipliedBy(3)).toCompletableFuture();
        soon().until(() -> condition.waiters().size() == 1);
        held.close();
        assertThat(awaited).isCancelled();
        soon().until(() -> condition.waiters().isEmpty());
        assertThat(held.isValid()).isFalse();
        assertThat(lock.isLocked()).isFalse();
    }

    /** A close in the stage's own callback, as the handle is given the lock back, is a close like any other. */
    @Test
    void aHandleClosedAsItsAwaitCompletesReleasesTheLockBeforeTheCloseReturns() throws Exception {
        RelockLock lock = newClient().lock("order");
        LockHandle held = handleOf(lock);
        CompletableFuture<Boolean> lockedAfterTheClose = lock.newCondition().awaitAsync(held, Duration.ofMillis(50))
                .thenApply(signalled -> {
                    held.close();
                    return lock.isLocked();
                }).toCompletableFuture();
        assertThat(resultOf(lockedAfterTheClose)).as("locked just after the close in the stage's callback").isFalse();
        assertThat(held.state()).isEqualTo(LeaseState.RELEASED);
    }

    @Test
    void aHandleHolderSignalsAThreadThatAwaits() throws Exception {
        RelockLock lock = newClient().lock("order");
        CompletableFuture<Boolean> waiter = inNewThread("waiter", () -> {
            lock.lock();
            try {
                return lock.newCondition().await(HANG.toMillis() * 3, TimeUnit.MILLISECONDS);
            } finally {
                lock.unlock();
            }
        });
        RelockLock other = newClient().lock("order");
        soon().until(() -> other.newCondition().waiters().size() == 1);
        LockHandle held = handleOf(other);
        other.newCondition().signalAll(held);
        held.close();
        assertThat(resultOf(waiter)).isTrue();
        assertThatThrownBy(() -> other.newCondition().signal(held)).isInstanceOf(IllegalMonitorStateException.class)
                .hasMessageContaining("'order'");
    }

    @Test
    void anAwaitRefusesHandlesItCannotAwaitWithAndNamesTheLock() throws Exception {
        RelockClient client = newClient();
        RelockLock lock = client.lock("order");
        RelockCondition condition = lock.newCondition();
        LockHandle ofAThread = lock.acquire();
        assertThatThrownBy(() -> condition.awaitAsync(ofAThread, HANG)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'order'").hasMessageContaining("thread");
        ofAThread.close();
        LockHandle ofAnotherLock = handleOf(client.lock("invoice"));
        assertThatThrownBy(() -> condition.awaitAsync(ofAnotherLock, HANG))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'invoice'");
        ofAnotherLock.close();
        LockHandle readHold = handleOf(client.readWriteLock("shared").readLock());
        assertThatThrownBy(() -> client.readWriteLock("shared").writeLock().newCondition().awaitAsync(readHold, HANG))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("read lock");
        readHold.close();
        LockHandle ofAnotherClient = handleOf(newClient().lock("order"));
        assertThatThrownBy(() -> condition.awaitAsync(ofAnotherClient, HANG))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("another relock client");
        ofAnotherClient.close();
        LockHandle held = handleOf(lock);
        assertThatThrownBy(() -> condition.awaitAsync(held, null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> condition.awaitAsync(null, HANG)).isInstanceOf(NullPointerException.class);
        CompletableFuture<Boolean> awaiting = condition.awaitAsync(held, HANG.multipliedBy(3)).toCompletableFuture();
        assertThatThrownBy(() -> condition.awaitAsync(held, HANG)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("awaits a condition already");
        assertThatThrownBy(() -> held.extendLease(Duration.ofSeconds(10))).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("awaits a condition");
        awaiting.cancel(false);
        soon().until(() -> condition.waiters().isEmpty() && !lock.isLocked());
        assertThatThrownBy(() -> resultOf(awaiting)).isInstanceOf(CancellationException.class);
    }

    @Test
    void anAsyncAwaitOfAClosedClientFails() throws Exception {
        RelockClient client = newClient();
        RelockLock lock = client.lock("order");
        LockHandle held = handleOf(lock);
        CompletableFuture<Boolean> awaited = lock.newCondition().awaitAsync(held, HANG.multipliedBy(3))
                .toCompletableFuture();
        RelockCondition seenByAnother = newClient().lock("order").newCondition();
        soon().until(() -> seenByAnother.waiters().size() == 1);
        client.close();
        assertThatThrownBy(() -> resultOf(awaited)).isInstanceOf(ExecutionException.class)
                .cause().isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
    }

    /** A handle of {@code lock}: a hold that belongs to no thread. */
    private static LockHandle handleOf(RelockLock lock) throws Exception {
        return resultOf(lock.acquireAsync().toCompletableFuture());
    }
}
