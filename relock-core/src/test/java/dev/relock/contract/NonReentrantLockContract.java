package dev.relock.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.relock.LeaseLostException;
import dev.relock.LockHandle;
import dev.relock.LockKind;
import dev.relock.RelockClient;
import dev.relock.RelockLock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.ThrowingConsumer;

/**
 * The exclusive lock seen without re-entry ({@code RelockClient.nonReentrantLock}), as every deployment must serve it:
 * the holding thread is refused at once instead of waiting for itself, and it is the same lock as {@code lock(name)}
 * of the name in every client.
 */
abstract class NonReentrantLockContract extends ContractBase {

    @Test
    void aThreadThatHoldsItIsRefusedAtOnceAndItsTryLocksReturnFalseWithoutWaiting() throws Exception {
        RelockClient client = newClient();
        RelockLock lock = client.nonReentrantLock("single-entry");
        assertThat(lock.name()).isEqualTo("single-entry");
        lock.lock();
        long token = lock.fencingToken().orElseThrow();
        List<ThrowingConsumer<RelockLock>> waitsWithoutDeadline = List.of(
                RelockLock::lock,
                held -> held.lock(5, TimeUnit.SECONDS),
                RelockLock::lockInterruptibly,
                held -> held.lockInterruptibly(5, TimeUnit.SECONDS),
                RelockLock::acquire);
        for (ThrowingConsumer<RelockLock> again : waitsWithoutDeadline) {
            assertThatThrownBy(() -> again.accept(lock)).isExactlyInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("'single-entry'").hasMessageContaining("not reentrant");
        }
        long start = System.nanoTime();
        assertThat(lock.tryLock()).isFalse();
        assertThat(lock.tryLock(HANG.toMillis(), TimeUnit.MILLISECONDS)).isFalse();
        assertThat(lock.tryLock(HANG.toMillis(), 5_000, TimeUnit.MILLISECONDS)).isFalse();
        assertThat(lock.tryAcquire(HANG)).isEmpty();
        assertThat(lock.tryAcquire(HANG, Duration.ofSeconds(5))).isEmpty();
        assertThat(millisSince(start)).as("ms of five tries with a wait of %s each", HANG)
                .isLessThan(HANG.toMillis());
        assertThat(lock.getHoldCount()).as("holds after the refused re-entries").isEqualTo(1);
        assertThat(lock.isHeldByCurrentThread()).isTrue();
        assertThat(lock.fencingToken()).hasValue(token);
        assertThat(lock.toString()).contains("non-reentrant");

        // a handle is its own owner and waits like any other, as on the reentrant lock
        assertThat(lock.tryAcquireAsync(Duration.ofMillis(200)).toCompletableFuture()
                .get(HANG.toMillis(), TimeUnit.MILLISECONDS)).as("a handle of the holding client").isEmpty();
        lock.unlock();
        assertThat(lock.isLocked()).isFalse();

        // released, it is taken again as a fresh hold
        try (LockHandle again = lock.acquire()) {
            assertThat(again.fencingToken()).isGreaterThan(token);
            assertThat(lock.getHoldCount()).isEqualTo(1);
        }
        assertThat(lock.isLocked()).isFalse();
    }

    @Test
    void itIsTheLockOfItsNameWhicheverViewTookItAndOnlyTheNonReentrantViewRefusesTheHolder() throws Exception {
        RelockClient client = newClient();
        RelockLock single = client.nonReentrantLock("one-lock");
        RelockLock reentrant = client.lock("one-lock");

        // held through the reentrant view: the non-reentrant one refuses the same thread
        reentrant.lock();
        assertThat(single.isHeldByCurrentThread()).isTrue();
        assertThatThrownBy(single::lock).isInstanceOf(IllegalStateException.class).hasMessageContaining("one-lock");
        assertThat(single.tryLock()).isFalse();
        assertThat(reentrant.getHoldCount()).isEqualTo(1);
        reentrant.unlock();

        // held through the non-reentrant view: it is the exclusive lock of the name, under its keys, for everyone
        single.lock();
        String owner = client.clientId() + ":" + Thread.currentThread().getId();
        assertThat(client.inspect("one-lock")).satisfies(info -> {
            assertThat(info.kind()).isEqualTo(LockKind.EXCLUSIVE);
            assertThat(info.holders()).containsOnlyKeys(owner);
        });
        RelockClient other = newClient();
        assertThat(other.lock("one-lock").tryLock()).as("another client's lock(name)").isFalse();
        assertThat(other.nonReentrantLock("one-lock").tryLock()).as("another client's nonReentrantLock(name)").isFalse();
        assertThat(other.readWriteLock("one-lock").readLock().tryLock()).as("another client's read lock").isFalse();
        assertThat(resultOf(inNewThread("same-client-other-thread", () -> single.tryLock())))
                .as("another thread of the holding client").isFalse();
        // the reentrant view of the holder's thread re-enters the one hold: re-entry is the view's choice
        reentrant.lock();
        assertThat(single.getHoldCount()).isEqualTo(2);
        reentrant.unlock();
        single.unlock();
        assertThat(single.isLocked()).isFalse();

        // a reader of another client keeps it out
        RelockLock reader = other.readWriteLock("one-lock").readLock();
        reader.lock();
        assertThat(single.tryLock()).as("while another client reads").isFalse();
        reader.unlock();
        assertThat(single.tryLock()).isTrue();
        single.unlock();
    }

    @Test
    void aThreadWhoseHoldWasLostIsToldSoWhenItAsksAgainAsAtAReentry() throws Exception {
        RelockLock lock = newClient().nonReentrantLock("lost-single");
        lock.lock(300, TimeUnit.MILLISECONDS);
        long token = lock.fencingToken().orElseThrow();
        Polling.soon("the loss was told").until(() -> lost.stream().anyMatch(event -> event.fencingToken() == token));
        assertThatThrownBy(lock::tryLock).isInstanceOf(LeaseLostException.class).hasMessageContaining("lost-single");
        assertThatThrownBy(lock::lock).isInstanceOf(LeaseLostException.class).hasMessageContaining("lost-single");
        assertThatThrownBy(lock::unlock).isInstanceOf(LeaseLostException.class);
        assertThat(lock.getHoldCount()).isZero();
        assertThat(lock.tryLock()).as("once the lost hold was unlocked").isTrue();
        lock.unlock();
    }

    @Test
    void threadsOfSeveralClientsThroughBothViewsNeverOverlap() throws Exception {
        int perThread = 10;
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        AtomicInteger sections = new AtomicInteger();
        List<CompletableFuture<Void>> workers = new ArrayList<>();
        for (int c = 0; c < 2; c++) {
            RelockClient client = newClient();
            for (int t = 0; t < 2; t++) {
                RelockLock lock = t == 0 ? client.nonReentrantLock("shared-name") : client.lock("shared-name");
                workers.add(inNewThread("worker-" + c + "-" + t, () -> {
                    for (int i = 0; i < perThread; i++) {
                        lock.lock();
                        try {
                            if (inside.incrementAndGet() != 1) {
                                overlaps.incrementAndGet();
                            }
                            sections.incrementAndGet();
                            Thread.yield();
                            inside.decrementAndGet();
                        } finally {
                            lock.unlock();
                        }
                    }
                    return null;
                }));
            }
        }
        for (CompletableFuture<Void> worker : workers) {
            worker.get(2 * HANG.toMillis(), TimeUnit.MILLISECONDS);
        }
        assertThat(sections).hasValue(4 * perThread);
        assertThat(overlaps).as("critical sections that overlapped").hasValue(0);
    }

    @Test
    void badNamesAreRefusedAsForLock() {
        RelockClient client = newClient();
        assertThatThrownBy(() -> client.nonReentrantLock(null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("lock name");
        assertThatThrownBy(() -> client.nonReentrantLock(" ")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("blank");
        client.close();
        assertThatThrownBy(() -> client.nonReentrantLock("closed")).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
    }
}
