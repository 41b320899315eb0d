package dev.relock.redlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.relock.LeaseLostException;
import dev.relock.LockHandle;
import dev.relock.RedisUnavailableException;
import dev.relock.RelockClient;
import dev.relock.RelockLock;
import dev.relock.testredis.TcpProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Redlock over three servers: a majority is two; one down is tolerated, two are not. */
@Tag("redis")
class RedlockThreeNodesTest extends RedlockTestBase {

    private static final Duration COMMAND_TIMEOUT = Duration.ofMillis(500);

    @Override
    int nodeCount() {
        return 3;
    }

    @Test
    void clientsExcludeEachOtherWithOneNodeDown() throws Exception {
        RedlockLockTest.Contention contention = new RedlockLockTest.Contention();
        List<CompletableFuture<Void>> workers = new ArrayList<>();
        CountDownLatch start = new CountDownLatch(1);
        List<RelockLock> locks = new ArrayList<>();
        for (int c = 0; c < 3; c++) {
            locks.add(newClient(b -> b.commandTimeout(COMMAND_TIMEOUT)).lock("three"));
        }
        nodes.get(1).kill();
        for (int c = 0; c < locks.size(); c++) {
            RelockLock lock = locks.get(c);
            for (int t = 0; t < 2; t++) {
                workers.add(inNewThread("client" + c + "-thread" + t, () -> {
                    start.await();
                    for (int i = 0; i < 25; i++) {
                        try (LockHandle held = lock.acquire()) {
                            contention.criticalSection(held.fencingToken());
                        }
                    }
                    return null;
                }));
            }
        }
        start.countDown();
        CompletableFuture.allOf(workers.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
        assertThat(contention.overlaps).hasValue(0);
        assertThat(contention.tokens()).hasSize(3 * 2 * 25).isSorted().doesNotHaveDuplicates();
    }

    @Test
    void twoOfThreeDownIsNoMajority() {
        RelockClient client = newClient(b -> b.commandTimeout(COMMAND_TIMEOUT));
        nodes.get(0).kill();
        nodes.get(2).kill();
        assertThatThrownBy(() -> client.lock("three-down").tryLock())
                .isInstanceOf(RedisUnavailableException.class)
                .hasMessageContaining("of 3 Redlock nodes answered, a majority needs 2")
                .hasMessageContaining(nodes.get(0).port() + "");
    }

    /**
     * A failed attempt is cleaned up on a node only once that node answered it; a client closed before the answer
     * came closed the connection first and left the hold there for its lease (seen once in CI). close() now waits
     * for the clean-ups in flight.
     */
    @Test
    void aFailedAttemptIsCleanedUpAlthoughItsClientClosedBeforeTheNodeAnswered() throws Exception {
        try (TcpProxy proxy = TcpProxy.to(nodes.get(1))) {
            RelockClient client = RelockClient.builder().commandTimeout(COMMAND_TIMEOUT)
                    .redlock(nodes.get(0).uri(), proxy.uri(), nodes.get(2).uri()).build();
            try {
                nodes.get(0).kill();
                nodes.get(2).kill();
                proxy.replyLatency(Duration.ofMillis(300)); // the one node left answers after the two failures
                assertThatThrownBy(() -> client.lock("closed-first").tryLock())
                        .isInstanceOf(RedisUnavailableException.class);
            } finally {
                client.close();
            }
            assertThat(nodes.get(1).execute("EXISTS", "relock:{closed-first}")).as("the attempt's hold").isEqualTo("0");
        }
    }

    /**
     * Issue 13, item 2: the renewer told the owner of a loss ({@code whenLost()}) before it sent the clean-up that
     * names no attempt; an owner that gave the lost hold up and took the lock again meanwhile (the same thread
     * owner id) had its new hold deleted by that late clean-up, and another client got in. The whenLost callback
     * runs on the renewer's thread inside the report, so holding it there until the owner holds the lock again
     * opens that window every time. Then the clean-up was sent before anybody was told (which let another client in
     * before the owner knew: {@code RedlockLockTest#aLostHoldIsLeftOnTheNodesUntilItsOwnerWasTold}); now it is sent
     * after, and names the attempt that took the lost hold, so it removes nothing of the owner's next attempt.
     */
    @Test
    void theCleanUpOfALostHoldNeverDeletesTheSameThreadsNextHold() throws Exception {
        String name = "lost-then-retaken";
        RelockLock lock = newClient(b -> b.defaultLease(Duration.ofMillis(900))).lock(name);
        CountDownLatch retaken = new CountDownLatch(1);
        CountDownLatch reportDone = new CountDownLatch(1);
        LockHandle second = resultOf(inNewThread("owner", () -> {
            LockHandle first = lock.acquire();
            CompletableFuture<Void> told = new CompletableFuture<>();
            first.whenLost().thenRun(() -> {
                told.complete(null);
                try {
                    retaken.await(HANG.toMillis(), TimeUnit.MILLISECONDS); // the renewer waits here, mid-report
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } finally {
                    reportDone.countDown();
                }
            });
            nodes.forEach(node -> node.execute("DEL", "relock:{" + name + "}")); // lost at the next renewal
            told.get(HANG.toMillis(), TimeUnit.MILLISECONDS);
            assertThatThrownBy(first::close).isInstanceOf(LeaseLostException.class);
            LockHandle next = lock.acquire();
            retaken.countDown();
            return next;
        }));
        assertThat(reportDone.await(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        // whatever the renewer sends after the report reaches the nodes within milliseconds
        await().during(Duration.ofMillis(500)).atMost(HANG)
                .until(() -> nodesHolding(name) == nodes.size());
        assertThat(newClient().lock(name).tryLock()).as("another client while the new hold is held").isFalse();
        second.close();
    }
}
