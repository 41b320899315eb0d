package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Where a signalled waiter stands among those waiting for the lock, as {@link RelockCondition}'s javadoc states it: at
 * the end of the lock's queue in Redis, and so before the threads of the signaller's own client that wait for the
 * lock in that client, even those that asked before the signal (the javadoc claimed it went after everyone who had
 * asked before the signal; found by review).
 */
@Tag("redis")
class ConditionOrderTest extends OneServerTestBase {

    @Test
    void aSignalledWaiterGoesBeforeTheSignallersOwnThreadsThatAskedBeforeTheSignal() throws Exception {
        RelockClient signallers = newClient(builder -> builder.defaultLease(Duration.ofMinutes(3)));
        RelockLock lock = signallers.lock("order");
        RelockLock waiting = newClient(builder -> builder.defaultLease(Duration.ofMinutes(3))).lock("order");
        List<String> order = new ArrayList<>();
        CompletableFuture<Void> signalled = inNewThread("signalled", () -> {
            waiting.lock();
            try {
                assertThat(waiting.newCondition().await(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
                synchronized (order) {
                    order.add("signalled waiter");
                }
            } finally {
                waiting.unlock();
            }
            return null;
        });
        await().atMost(HANG).until(() -> lock.newCondition().waiters().size() == 1);
        lock.lock();
        CompletableFuture<Void> sibling = inNewThread("sibling", () -> {
            assertThat(lock.tryLock(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
            synchronized (order) {
                order.add("signaller's sibling");
            }
            lock.unlock();
            return null;
        });
        LocalLineTest.awaitWaiting("sibling");
        assertThat(queue("order")).as("the sibling waits in its client, not in Redis").isEmpty();

        lock.newCondition().signal();
        lock.unlock();
        resultOf(signalled);
        resultOf(sibling);
        assertThat(order).containsExactly("signalled waiter", "signaller's sibling");
    }
}
