package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Interrupts: the interruptible waits stop with InterruptedException and leave the queue, so the
 * next waiter is not held up; lock() keeps waiting and hands the interrupt back.
 */
class InterruptTest extends OneServerTestBase {

    /**
     * Long enough that a waiter left in the queue after its interrupt would visibly hold up the next
     * one (its turn would have to expire first), which the tests below rule out.
     */
    private static final Duration LONG_GRACE = Duration.ofSeconds(20);

    @AfterEach
    void clearOwnInterrupt() {
        Thread.interrupted();
    }

    private RelockLock lockWithLongGrace(String name) {
        return newClient(b -> b.handoffGrace(LONG_GRACE)).lock(name);
    }

    @Test
    void lockInterruptiblyStopsOnInterruptAndLeavesTheQueue() throws Exception {
        interruptedWaiterLeavesTheQueue("interruptible", lock -> {
            lock.lockInterruptibly();
            return true;
        });
    }

    @Test
    void tryLockWithWaitStopsOnInterruptAndLeavesTheQueue() throws Exception {
        interruptedWaiterLeavesTheQueue("try-interruptible", lock -> lock.tryLock(20, TimeUnit.SECONDS));
    }

    @Test
    void tryAcquireStopsOnInterruptAndLeavesTheQueue() throws Exception {
        interruptedWaiterLeavesTheQueue("acquire-interruptible",
                lock -> lock.tryAcquire(Duration.ofSeconds(20)).isPresent());
    }

    private interface Acquisition {
        boolean acquire(RelockLock lock) throws InterruptedException;
    }

    private void interruptedWaiterLeavesTheQueue(String name, Acquisition acquisition) throws Exception {
        RelockLock holder = lockWithLongGrace(name);
        RelockClient interruptedClient = newClient(b -> b.handoffGrace(LONG_GRACE));
        RelockLock interrupted = interruptedClient.lock(name);
        RelockLock next = lockWithLongGrace(name);
        holder.lock();

        AtomicReference<Thread> waitingThread = new AtomicReference<>();
        CompletableFuture<Boolean> stillInterrupted = new CompletableFuture<>();
        CompletableFuture<Boolean> outcome = inNewThread("interrupted-waiter", () -> {
            waitingThread.set(Thread.currentThread());
            try {
                boolean got = acquisition.acquire(interrupted);
                if (got) {
                    interrupted.unlock();
                }
                return got;
            } finally {
                stillInterrupted.complete(Thread.currentThread().isInterrupted());
            }
        });
        await().atMost(HANG).until(() -> queue(name).size() == 1);

        // a second waiter, in line behind the one to be interrupted
        CompletableFuture<Boolean> nextOutcome = inNewThread("next-waiter", () -> {
            boolean got = next.tryLock(HANG.toMillis(), TimeUnit.MILLISECONDS);
            if (got) {
                next.unlock();
            }
            return got;
        });
        await().atMost(HANG).until(() -> queue(name).size() == 2);
        assertThat(ownedBy(queue(name).get(0), interruptedClient)).isTrue();

        waitingThread.get().interrupt();
        assertThatThrownBy(() -> resultOf(outcome)).hasCauseInstanceOf(InterruptedException.class);
        assertThat(resultOf(stillInterrupted)).as("interrupt status after InterruptedException").isFalse();
        await().atMost(HANG).until(() -> queue(name).stream().noneMatch(owner -> ownedBy(owner, interruptedClient)));
        assertThat(interrupted.getHoldCount()).isZero();

        long released = System.nanoTime();
        holder.unlock();
        // the next waiter is first in line now: it does not sit out the interrupted one's grace
        assertThat(nextOutcome.get(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        assertThat(millisSince(released)).isLessThan(HANG.toMillis());
        assertThat(queue(name)).isEmpty();
    }

    @Test
    void lockKeepsWaitingThroughAnInterruptAndReturnsWithTheInterruptSet() throws Exception {
        RelockLock holder = newClient().lock("uninterruptible");
        RelockLock waiting = newClient().lock("uninterruptible");
        holder.lock();

        AtomicReference<Thread> waitingThread = new AtomicReference<>();
        CountDownLatch acquired = new CountDownLatch(1);
        CompletableFuture<Boolean> interruptSetOnReturn = inNewThread("uninterruptible-waiter", () -> {
            waitingThread.set(Thread.currentThread());
            waiting.lock();
            try {
                acquired.countDown();
                return Thread.currentThread().isInterrupted();
            } finally {
                waiting.unlock();
            }
        });
        await().atMost(HANG).until(() -> queue("uninterruptible").size() == 1);

        waitingThread.get().interrupt();
        assertThat(acquired.await(500, TimeUnit.MILLISECONDS)).as("acquired although still held").isFalse();
        assertThat(interruptSetOnReturn).isNotDone();
        assertThat(queue("uninterruptible")).as("still in line after the interrupt").hasSize(1);

        holder.unlock();
        assertThat(interruptSetOnReturn.get(HANG.toMillis(), TimeUnit.MILLISECONDS)).as("interrupt status when lock() returned").isTrue();
    }

    @Test
    void interruptibleAcquisitionsWithTheInterruptAlreadySetThrowAtOnce() {
        RelockLock lock = newClient().lock("pre-interrupted");

        Thread.currentThread().interrupt();
        assertThatThrownBy(lock::lockInterruptibly).isInstanceOf(InterruptedException.class);
        assertThat(Thread.currentThread().isInterrupted()).as("status cleared by the exception").isFalse();

        Thread.currentThread().interrupt();
        assertThatThrownBy(() -> lock.tryLock(1, TimeUnit.SECONDS)).isInstanceOf(InterruptedException.class);
        Thread.currentThread().interrupt();
        assertThatThrownBy(() -> lock.tryLock(1, 5, TimeUnit.SECONDS)).isInstanceOf(InterruptedException.class);
        Thread.currentThread().interrupt();
        assertThatThrownBy(() -> lock.tryAcquire(Duration.ofSeconds(1))).isInstanceOf(InterruptedException.class);
        assertThat(Thread.interrupted()).isFalse();

        assertThat(lock.getHoldCount()).isZero();
        assertThat(lock.isLocked()).as("nothing was acquired").isFalse();
    }

    @Test
    void uninterruptibleCallsWorkWithTheInterruptSetAndKeepIt() {
        RelockLock lock = newClient().lock("interrupt-kept");
        Thread.currentThread().interrupt();
        try {
            assertThat(lock.tryLock()).isTrue();
            assertThat(Thread.currentThread().isInterrupted()).isTrue();
            lock.unlock();
            assertThat(Thread.currentThread().isInterrupted()).isTrue();

            lock.lock();
            assertThat(lock.isLocked()).isTrue();
            lock.unlock();
            assertThat(lock.isLocked()).as("released although interrupted").isFalse();
            assertThat(Thread.currentThread().isInterrupted()).isTrue();
        } finally {
            Thread.interrupted();
        }
    }
}
