package dev.relock.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

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
                .hasMessageContaining("twice"); // no name at all, or a null one: BadInputContract
        assertThatThrownBy(() -> other.multiLock((String[]) null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> other.multiLock("a", " ")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void takesNoneWhenOneIsHeldElsewhereAndWaitsForAReaderHoldingWhatItTook() throws Exception {
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

        // a reader on one name makes the whole set wait, in key order: what comes before it is taken meanwhile
        RelockLock reader = other.readWriteLock("stock:2").readLock();
        blocker.unlock();
        reader.lock();
        CompletableFuture<MultiLockHandle> waiter = inNewThread("multi-waiter", () -> all.tryAcquire(HANG).orElseThrow());
        await().atMost(HANG).until(() -> other.inspect("stock:2").waiters() == 1);
        assertThat(other.lock("stock:1").isLocked()).as("taken in order while waiting").isTrue();
        assertThat(waiter).isNotDone();
        reader.unlock();
        MultiLockHandle got = resultOf(waiter);
        assertThat(got.handles()).as("locks the waiting set got after the release").hasSize(3);
        got.close(); // by another thread than the one that took them
        assertThat(other.lock("stock:1").isLocked()).isFalse();
        assertThat(other.lock("stock:2").isLocked()).isFalse();
    }

    /**
     * Issue 13, item 6 (reproduced): {@code lock()} took "a", then "b" refused the thread's write lock (it holds a
     * read lock on "b": an upgrade), and "a" stayed held and renewed for as long as the client lived. Every way of
     * taking the set gives back what it took when a later member throws.
     */
    @Test
    void aMemberThatThrowsGivesBackWhatTheSetHadTaken() throws Exception {
        RelockClient client = newClient();
        RelockLock elsewhere = newClient().lock("leak:a");
        RelockMultiLock both = client.multiLock("leak:a", "leak:b");
        RelockLock reading = client.readWriteLock("leak:b").readLock();
        List<String> failures = resultOf(inNewThread("multi-upgrade", () -> {
            List<String> failed = new ArrayList<>();
            reading.lock();
            try {
                for (ThrowingRunnable attempt : List.<ThrowingRunnable>of(both::lock, both::lockInterruptibly,
                        both::tryLock, () -> both.tryLock(1, TimeUnit.SECONDS), both::acquire,
                        () -> both.tryAcquire(Duration.ofSeconds(1)))) {
                    try {
                        attempt.run();
                        failed.add("an attempt did not throw");
                    } catch (IllegalMonitorStateException expected) {
                        if (client.lock("leak:a").isHeldByCurrentThread() || elsewhere.isLocked()) {
                            failed.add("leak:a kept after " + expected.getMessage());
                        }
                    }
                }
            } finally {
                reading.unlock();
            }
            return failed;
        }));
        assertThat(failures).isEmpty();
        assertThat(client.heldLocks()).isEmpty();
    }

    /** An acquisition of the whole set, as a lambda. */
    private interface ThrowingRunnable {
        void run() throws Exception;
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
