package dev.relock.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.reflect.Proxy;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * A handle's states around a condition's await, without Redis. The engine is never called in these steps: one that
 * fails on any call stands in for it.
 */
class HoldHandleTest {

    private static final Engine UNCALLED = (Engine) Proxy.newProxyInstance(HoldHandleTest.class.getClassLoader(),
            new Class<?>[] {Engine.class}, (proxy, method, args) -> {
                throw new AssertionError("the engine was called: " + method.getName());
            });

    private static HoldHandle handle() {
        Hold hold = new Hold("queue", LockKeys.of("test", "queue"), LockMode.WRITE, "owner", 7, 30_000, true, 0);
        return new HoldHandle(UNCALLED, hold);
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
