package dev.relock.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.relock.LeaseState;
import java.lang.reflect.Proxy;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A handle's states around a condition's await, without Redis. The engine is never called in these steps but for a
 * close's release, which is recorded: one that fails on any other call stands in for it.
 */
class HoldHandleTest {

    private static final Engine UNCALLED = (Engine) Proxy.newProxyInstance(HoldHandleTest.class.getClassLoader(),
            new Class<?>[] {Engine.class}, (proxy, method, args) -> {
                throw new AssertionError("the engine was called: " + method.getName());
            });

    private static HoldHandle handle() {
        return new HoldHandle(UNCALLED, hold(7));
    }

    private static Hold hold(long fencingToken) {
        return new Hold("queue", LockKeys.of("test", "queue"), LockMode.WRITE, "owner", fencingToken, 30_000, true, 0);
    }

    /** An engine that records the holds it is asked to release, and fails on any other call. */
    private static Engine releasingInto(List<Hold> released) {
        return (Engine) Proxy.newProxyInstance(HoldHandleTest.class.getClassLoader(), new Class<?>[] {Engine.class},
                (proxy, method, args) -> {
                    if (!method.getName().equals("release")) {
                        throw new AssertionError("the engine was called: " + method.getName());
                    }
                    released.add((Hold) args[0]);
                    return null;
                });
    }

    /**
     * The await takes the lock back between a close's compare-and-set (AWAITING to CLOSED_AWAITING) and its cancel of
     * the await's stage: the stage ends cancelled and the await gives up what it took back. Before, the take-back
     * completed the stage normally, so the close's cancel did nothing and released nothing, and the await left the
     * hold to the caller, whose handle was closed: nobody gave it up, and the watchdog renewed it for as long as the
     * client ran (a CI run beside two busy loops, AsyncAwaitHandleReuseTest, 30 Nov). The stage's cancel runs the
     * take-back first here, as a thread that completes the await between the two steps would.
     */
    @Test
    void aCloseThatFindsTheHoldLentWinsOverATakeBackBeforeItsCancel() {
        List<Hold> released = new CopyOnWriteArrayList<>();
        HoldHandle handle = new HoldHandle(releasingInto(released), hold(7));
        Hold again = hold(8);
        boolean[] awaitGivesUp = new boolean[1];
        CompletableFuture<Boolean> awaited = new CompletableFuture<>() {
            private boolean tookBack;

            @Override
            public boolean cancel(boolean mayInterruptIfRunning) {
                if (!tookBack) {
                    tookBack = true;
                    awaitGivesUp[0] = handle.resume(again, this, true);
                }
                return super.cancel(mayInterruptIfRunning);
            }
        };
        handle.lendForAwait(awaited);

        handle.close();

        assertThat(awaited).as("the caller's stage").isCancelled();
        assertThat(awaitGivesUp[0]).as("whether the await gives up the hold it took back").isTrue();
        assertThat(released).as("what the close released: the hold was lent, so nothing").isEmpty();
        assertThat(handle.state()).isEqualTo(LeaseState.RELEASED);
    }

    /** A take-back before the close: the caller has the result, and its close releases the hold taken back, once. */
    @Test
    void aCloseAfterTheTakeBackReleasesTheHoldTakenBack() {
        List<Hold> released = new CopyOnWriteArrayList<>();
        HoldHandle handle = new HoldHandle(releasingInto(released), hold(7));
        Hold again = hold(8);
        CompletableFuture<Boolean> awaited = new CompletableFuture<>();
        handle.lendForAwait(awaited);

        assertThat(handle.resume(again, awaited, true)).as("whether the await gives up the hold it took back")
                .isFalse();
        assertThat(awaited).isCompletedWithValue(true);
        handle.close();
        handle.close();

        assertThat(released).containsExactly(again);
    }

    /** A caller that cancelled its await's stage takes nothing: the await gives up what it takes back. */
    @Test
    void aCancelledAwaitGivesUpWhatItTakesBack() {
        List<Hold> released = new CopyOnWriteArrayList<>();
        HoldHandle handle = new HoldHandle(releasingInto(released), hold(7));
        CompletableFuture<Boolean> awaited = new CompletableFuture<>();
        handle.lendForAwait(awaited);
        awaited.cancel(false);

        assertThat(handle.resume(hold(8), awaited, false)).as("whether the await gives up the hold it took back")
                .isTrue();
        handle.close();

        assertThat(released).as("what the close released").isEmpty();
        assertThat(handle.state()).isEqualTo(LeaseState.RELEASED);
    }

    /**
     * A handle closed while its await is still ending (a cancelled await hands the handle back only after its stage
     * completed) is closed, and a new await is refused as on a closed handle, not as on one that awaits already: the
     * contract suite saw the wrong message once on Sentinel, between a cancelled await's end and its hand-back.
     */
    @Test
    void aHandleClosedWhileItsAwaitEndsRefusesANewAwaitAsClosed() {
        HoldHandle handle = handle();
        CompletableFuture<Boolean> awaited = new CompletableFuture<>();
        handle.lendForAwait(awaited);
        assertThat(awaited.cancel(false)).isTrue();

        handle.close();

        assertThatThrownBy(() -> handle.lendForAwait(new CompletableFuture<>()))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("is closed")
                .hasMessageNotContaining("awaits a condition already");
    }

    @Test
    void aHandleLentToAnAwaitRefusesASecondAwaitAsAwaitingAlready() {
        HoldHandle handle = handle();
        handle.lendForAwait(new CompletableFuture<>());

        assertThatThrownBy(() -> handle.lendForAwait(new CompletableFuture<>()))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("awaits a condition already");
    }

    private static void await(CountDownLatch latch) {
        try {
            if (!latch.await(10, TimeUnit.SECONDS)) {
                throw new AssertionError("a step of the interleaving did not come");
            }
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    /**
     * Found by review of the fix above. Thread A completes the first await (RESUMING, its stage completed, A still in
     * the caller's callback). Thread B (here the test's thread) calls close(): it reads RESUMING and the first await's
     * stage, done. Before its compare-and-set, the caller awaits again (lendForAwait: RESUMING settled to OPEN, then
     * AWAITING) and thread C takes the lock back for that second await (RESUMING again, its stage not completed yet).
     * B's compare-and-set of RESUMING to CLOSED succeeded on the second await's RESUMING and released "the caller's"
     * hold; then C completed the second stage normally, with the signal, after close() had returned: the caller was
     * told it held the lock again while the handle was closed and the hold released (two holders), and B could even
     * read the first await's hold, given up long ago, so that the second was released by nobody. The close now acts
     * only on the RESUMING of the stage it read.
     */
    @Test
    void aCloseThatReadTheFirstAwaitsStageDoesNotTakeTheSecondAwaitsTakeBackForATakenResult() throws Exception {
        SecondAwait second = closeAsASecondAwaitTakesTheLockBack(false);

        // what a close during the second await must leave: its stage cancelled, the await gives up what it took back
        // (passing the signal on), the close releases nothing
        assertThat(second.stage()).as("the second await's stage, after close() returned").isCancelled();
        assertThat(second.givesUp()[0]).as("whether the second await gives up the hold it took back").isTrue();
        assertThat(second.released()).as("what the close released").isEmpty();
        assertThat(second.handle().state()).isEqualTo(LeaseState.RELEASED);
    }

    /**
     * The same order, but the caller cancels the second await's stage after its take-back and before B's
     * compare-and-set: B closed as if the caller had taken a result and released the hold plainly; the second await's
     * settleAwait then found CLOSED and returned false, so the signal that await took was passed on by nobody.
     */
    @Test
    void aCloseThatReadTheFirstAwaitsStageLosesNoSignalOfACancelledSecondAwait() throws Exception {
        SecondAwait second = closeAsASecondAwaitTakesTheLockBack(true);

        assertThat(second.stage()).isCancelled();
        assertThat(second.givesUp()[0]).as("whether the second await gives up what it took back, passing its signal on")
                .isTrue();
        assertThat(second.released()).as("what the close released (plainly, without passing the signal on)").isEmpty();
    }

    /** What the steps of {@link #closeAsASecondAwaitTakesTheLockBack} left. */
    private record SecondAwait(HoldHandle handle, CompletableFuture<Boolean> stage, boolean[] givesUp,
            List<Hold> released) {}

    /**
     * The order of the two tests above, step by step: the first await completed (A in the caller's callback), B's
     * close() reads the first stage, the caller awaits again and C takes the lock back for it (and, if
     * {@code callerCancelsTheSecond}, the caller cancels it), then B goes on; C completes the second stage once B's
     * close() returned.
     */
    private static SecondAwait closeAsASecondAwaitTakesTheLockBack(boolean callerCancelsTheSecond) throws Exception {
        List<Hold> released = new CopyOnWriteArrayList<>();
        HoldHandle handle = new HoldHandle(releasingInto(released), hold(7));
        CountDownLatch aInCallback = new CountDownLatch(1);
        CountDownLatch aMayGoOn = new CountDownLatch(1);
        CountDownLatch secondTakenBack = new CountDownLatch(1);
        CountDownLatch closeReturned = new CountDownLatch(1);
        boolean[] secondGivesUp = new boolean[1];
        Thread[] c = new Thread[1];

        CompletableFuture<Boolean> second = new CompletableFuture<>() {
            @Override
            public boolean complete(Boolean value) {
                // on C, in resume: takeBack won (RESUMING, hold = the second's); completed once B's close is over
                secondTakenBack.countDown();
                await(closeReturned);
                return super.complete(value);
            }
        };
        CompletableFuture<Boolean> first = new CompletableFuture<>() {
            private boolean once;

            @Override
            public boolean cancel(boolean mayInterruptIfRunning) {
                if (!once && isDone()) {
                    // B, in close()'s RESUMING branch, has read this stage (done): before its compare-and-set, the
                    // caller (who has the first result) awaits again, and that await takes the lock back on C
                    once = true;
                    handle.lendForAwait(second);
                    c[0] = new Thread(() -> secondGivesUp[0] = handle.resume(hold(9), second, true), "C");
                    c[0].start();
                    await(secondTakenBack);
                    if (callerCancelsTheSecond) {
                        second.cancel(false);
                    }
                }
                return super.cancel(mayInterruptIfRunning);
            }
        };
        handle.lendForAwait(first);
        first.thenRun(() -> {
            aInCallback.countDown();
            await(aMayGoOn);
        });
        Thread a = new Thread(() -> handle.resume(hold(8), first, false), "A");
        a.start();
        await(aInCallback);

        handle.close(); // B
        closeReturned.countDown();
        c[0].join(10_000);
        aMayGoOn.countDown();
        a.join(10_000);
        return new SecondAwait(handle, second, secondGivesUp, released);
    }
}
