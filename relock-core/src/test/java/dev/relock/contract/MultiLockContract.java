package dev.relock.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.relock.MultiLockHandle;
import dev.relock.RelockClient;
import dev.relock.RelockLock;
import dev.relock.RelockMultiLock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The multi-lock, as every deployment must serve it: all of its locks or none, never a deadlock. */
abstract class MultiLockContract extends ContractBase {

    @Test
    void takesEveryLockWithATokenEachAndReleasesThemAll() {
        RelockMultiLock both = newClient().multiLock("account:b", "account:a");
        assertThat(both.names()).containsExactly("account:a", "account:b");
        RelockClient other = newClient();
        try (MultiLockHandle held = both.acquire()) {
            assertThat(held.fencingTokens()).containsOnlyKeys("account:a", "account:b");
            assertThat(held.isValid()).isTrue();
            assertThat(other.lock("account:a").isLocked()).isTrue();
            assertThat(other.lock("account:b").isLocked()).isTrue();
        }
        assertThat(other.lock("account:a").isLocked()).isFalse();
        assertThat(other.lock("account:b").isLocked()).isFalse();
        assertThatThrownBy(() -> other.multiLock("a", "a")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("twice");
    }

    @Test
    void takesNoneWhenOneIsHeldElsewhere() throws Exception {
        RelockLock blocker = newClient().lock("stock:2");
        RelockClient other = newClient();
        blocker.lock();
        RelockMultiLock all = newClient().multiLock("stock:1", "stock:2", "stock:3");
        Optional<MultiLockHandle> held = resultOf(inNewThread("multi", () -> all.tryAcquire(Duration.ofMillis(300))));
        assertThat(held).isEmpty();
        assertThat(other.lock("stock:1").isLocked()).as("a lock the set had taken was given back").isFalse();
        assertThat(other.lock("stock:3").isLocked()).isFalse();
        assertThat(resultOf(inNewThread("multi-trylock", () -> all.tryLock())).booleanValue()).isFalse();
        assertThat(other.lock("stock:1").isLocked()).isFalse();
        CompletableFuture<Integer> waiter = inNewThread("multi-waiter", () -> {
            try (MultiLockHandle got = all.tryAcquire(HANG).orElseThrow()) {
                return got.handles().size();
            }
        });
        blocker.unlock();
        assertThat(resultOf(waiter)).as("locks the waiting set got after the release").isEqualTo(3);
    }

    @Test
    void overlappingMultiLocksInOppositeOrdersNeverDeadlock() throws Exception {
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        List<CompletableFuture<Integer>> workers = new ArrayList<>();
        String[][] orders = {{"x", "y", "z"}, {"z", "y", "x"}, {"y", "x"}, {"z", "x"}};
        for (String[] order : orders) {
            RelockMultiLock lock = newClient().multiLock(order);
            workers.add(inNewThread("multi-" + String.join("", order), () -> {
                int rounds = 0;
                for (int i = 0; i < 10; i++) {
                    lock.lock();
                    try {
                        if (inside.incrementAndGet() != 1) {
                            overlaps.incrementAndGet(); // every pair of these sets shares a name
                        }
                        rounds++;
                        inside.decrementAndGet();
                    } finally {
                        lock.unlock();
                    }
                }
                return rounds;
            }));
        }
        for (CompletableFuture<Integer> worker : workers) {
            assertThat(worker.get(4 * HANG.toMillis(), TimeUnit.MILLISECONDS)).as("no deadlock: every worker finished")
                    .isEqualTo(10);
        }
        assertThat(overlaps).hasValue(0);
    }
}
