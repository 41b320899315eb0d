package dev.relock.redlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.relock.LockHandle;
import dev.relock.MultiLockHandle;
import dev.relock.RelockClient;
import dev.relock.RelockMultiLock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Multi-locks on Redlock over five servers: all or nothing, each member a full Redlock lock,
 * taken in the global key order, so overlapping multi-locks named in opposite orders never
 * deadlock.
 */
class RedlockMultiLockTest extends RedlockTestBase {

    @Override
    int nodeCount() {
        return 5;
    }

    @Test
    void allOrNothingAcrossClients() throws Exception {
        RelockClient mine = newClient();
        RelockClient theirs = newClient();
        RelockMultiLock ab = mine.multiLock("b", "a");
        assertThat(ab.names()).containsExactly("a", "b");
        MultiLockHandle held = ab.acquire();
        assertThat(held.fencingTokens()).containsOnlyKeys("a", "b");
        assertThat(theirs.lock("b").tryLock()).isFalse();

        RelockMultiLock bc = theirs.multiLock("c", "b");
        Optional<MultiLockHandle> none = bc.tryAcquire(Duration.ofMillis(150));
        assertThat(none).isEmpty();
        assertThat(nodesHolding("c")).as("the member taken before the wait ended is released").isZero();

        CompletableFuture<Boolean> waiter = inNewThread("waiter", () -> {
            try (MultiLockHandle got = bc.tryAcquire(HANG).orElseThrow()) {
                return got.handles().size() == 2;
            }
        });
        held.close();
        assertThat(resultOf(waiter)).isTrue();
        assertThatThrownBy(() -> mine.multiLock("a", "a")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("twice");
    }

    @Test
    void multiLocksInOppositeOrdersNeverDeadlockAndExcludeEachOther() throws Exception {
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        CountDownLatch start = new CountDownLatch(1);
        List<CompletableFuture<Void>> workers = new ArrayList<>();
        String[][] orders = {{"x", "y"}, {"y", "x"}};
        for (String[] order : orders) {
            RelockMultiLock lock = newClient().multiLock(order);
            workers.add(inNewThread("multi-" + order[0], () -> {
                start.await();
                for (int i = 0; i < 10; i++) {
                    lock.lock();
                    try {
                        if (inside.incrementAndGet() != 1) {
                            overlaps.incrementAndGet();
                        }
                        Thread.yield();
                        inside.decrementAndGet();
                    } finally {
                        lock.unlock();
                    }
                }
                return null;
            }));
        }
        start.countDown();
        CompletableFuture.allOf(workers.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
        assertThat(overlaps).hasValue(0);
        try (LockHandle x = newClient().lock("x").acquire()) {
            assertThat(x.fencingToken()).isPositive();
        }
    }
}
