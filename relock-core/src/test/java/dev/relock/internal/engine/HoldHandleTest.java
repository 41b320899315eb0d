package dev.relock.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.relock.LeaseState;
import java.lang.reflect.Proxy;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
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
}
