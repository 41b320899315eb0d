package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Review findings (issue 39, this session's asynchronous condition await): once an await's stage has completed, its
 * handle holds the lock again and is the caller's to use at once: to await again or release, from a callback of the
 * stage (which runs while the thread that completed it has not settled the handle yet) or from a thread that waited
 * for it. Each failed before HoldHandle settled a taken result itself (settleTakenResult).
 */
@Tag("redis")
class AsyncAwaitHandleReuseTest extends OneServerTestBase {

    /**
     * An await loop written as a chain (await, then await again on the same handle from the completion) is refused:
     * the callback's awaitAsync finds the handle RESUMING, not OPEN, and throws "awaits a condition already".
     */
    @Test
    void anAsyncAwaitCanBeChainedOnTheSameHandleFromTheCompletionOfTheLast() throws Exception {
        RelockLock lock = newClient().lock("order");
        RelockCondition condition = lock.newCondition();
        LockHandle held = handleOf(lock);
        CompletableFuture<Boolean> second = condition.awaitAsync(held, Duration.ofMillis(300)).toCompletableFuture()
                .thenCompose(first -> condition.awaitAsync(held, Duration.ofMillis(100)));
        assertThat(second.get(HANG.toMillis(), TimeUnit.MILLISECONDS)).as("the second await timed out").isFalse();
        assertThat(held.isValid()).isTrue();
        held.close();
        assertThat(lock.isLocked()).isFalse();
    }

    /**
     * RelockCondition's Javadoc: releaseAfter throws only "while it waits". In a callback of the completed stage the
     * handle holds the lock again, yet releaseAfter throws "awaits a condition: releaseAfter once the await's stage
     * has completed".
     */
    @Test
    void releaseAfterWorksInACallbackOfTheCompletedStage() throws Exception {
        RelockLock lock = newClient().lock("order");
        LockHandle held = handleOf(lock);
        CompletableFuture<Boolean> released = lock.newCondition().awaitAsync(held, Duration.ofMillis(300))
                .toCompletableFuture().thenApply(signalled -> {
                    held.releaseAfter(Duration.ofMillis(1));
                    return signalled;
                });
        assertThat(released.get(HANG.toMillis(), TimeUnit.MILLISECONDS)).isFalse();
        await().atMost(HANG).until(() -> !lock.isLocked());
    }

    /**
     * A caller that waits for the stage in a thread of its own (get()) and awaits again at once races the event
     * executor that completed the stage: until it has run settleAwait the handle is RESUMING, and the next awaitAsync
     * is refused ("awaits a condition already") although the first one's stage completed normally.
     */
    @Test
    void anAsyncAwaitCanFollowTheLastOnceItsStageCompleted() throws Exception {
        RelockLock lock = newClient().lock("order");
        RelockCondition condition = lock.newCondition();
        LockHandle held = handleOf(lock);
        try {
            for (int i = 0; i < 300; i++) {
                assertThat(condition.awaitAsync(held, Duration.ofMillis(1)).toCompletableFuture()
                        .get(HANG.toMillis(), TimeUnit.MILLISECONDS)).as("await %d timed out", i).isFalse();
            }
        } finally {
            await().atMost(HANG).until(() -> {
                held.close();
                return !lock.isLocked();
            });
        }
    }

    /**
     * HoldHandle.lendForAwait sets its stage after the CAS to AWAITING; a close() between the two found the handle's
     * stage field still null (the handle's first await) and threw NullPointerException. Probabilistic: a window of a
     * few instructions, tried 200 times here (the review caught it within 3,000; more would cost CI minutes). It also
     * caught, once in a CI run beside two busy loops, an await that took the lock back between a close's CAS and its
     * cancel: the lock stayed held, and renewed, by nobody (HoldHandleTest steps through that order every run).
     */
    @Test
    void closingAHandleAsItStartsItsFirstAwaitNeverThrows() throws Exception {
        RelockClient client = newClient();
        RelockLock lock = client.lock("order");
        RelockCondition condition = lock.newCondition();
        AtomicReference<Throwable> closeFailed = new AtomicReference<>();
        for (int i = 0; i < 200 && closeFailed.get() == null; i++) {
            LockHandle held = handleOf(lock);
            CyclicBarrier both = new CyclicBarrier(2);
            Thread closer = new Thread(() -> {
                try {
                    both.await();
                    held.close();
                } catch (Throwable e) {
                    closeFailed.compareAndSet(null, e);
                }
            });
            closer.start();
            both.await();
            CompletionStage<Boolean> awaited = null;
            try {
                awaited = condition.awaitAsync(held, Duration.ofMillis(1));
            } catch (IllegalStateException closedFirst) {
                // the close came first
            }
            closer.join(HANG.toMillis());
            // checked at once and every 5 ms: Awaitility's default first look after 100 ms, 200 times, is 20 s of waiting
            try {
                await().atMost(HANG).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(5))
                        .until(() -> !lock.isLocked());
            } catch (ConditionTimeoutException stillLocked) {
                // what was left, if it comes back
                throw new AssertionError("the lock stayed taken after round " + i + ": the await "
                        + (awaited == null ? "was refused (the close came first)"
                                : "started, its stage " + awaited.toCompletableFuture())
                        + "; close() " + (closeFailed.get() == null ? "returned" : "threw " + closeFailed.get())
                        + "; the handle " + held + "; Redis: " + client.inspect("order") + "; the client holds "
                        + client.heldLocks(), stillLocked);
            }
        }
        assertThat(closeFailed.get()).as("what close() threw").isNull();
    }

    private static LockHandle handleOf(RelockLock lock) throws Exception {
        return resultOf(lock.acquireAsync().toCompletableFuture());
    }
}
