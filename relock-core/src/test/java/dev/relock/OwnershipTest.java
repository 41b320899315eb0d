package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Only the owning thread of the owning client releases a hold; an operator's forceUnlock takes a
 * lock away, and the former holder hears of it (listener, handle, unlock) instead of releasing the
 * next holder's lock.
 */
class OwnershipTest extends OneServerTestBase {

    @Test
    void unlockByAThreadThatDoesNotHoldItIsIllegalAndChangesNothing() throws Exception {
        RelockLock lock = newClient().lock("owned-by-main");
        lock.lock();
        try {
            Throwable thrown = resultOf(inNewThread("intruder", () -> {
                try {
                    lock.unlock();
                    return null;
                } catch (RuntimeException e) {
                    return e;
                }
            }));
            assertThat(thrown).isExactlyInstanceOf(IllegalMonitorStateException.class)
                    .hasMessageContaining("owned-by-main");
            assertThat(lock.isHeldByCurrentThread()).isTrue();
            assertThat(lock.isLocked()).isTrue();
        } finally {
            lock.unlock();
        }
        assertThat(lock.isLocked()).isFalse();
    }

    @Test
    void unlockByAnotherClientIsIllegalAndChangesNothing() {
        RelockLock mine = newClient().lock("owned-by-a");
        RelockLock theirs = newClient().lock("owned-by-a");
        mine.lock();
        try {
            // the same thread, but another client: a different owner
            assertThat(theirs.isHeldByCurrentThread()).isFalse();
            assertThat(theirs.getHoldCount()).isZero();
            assertThatThrownBy(theirs::unlock)
                    .isExactlyInstanceOf(IllegalMonitorStateException.class)
                    .hasMessageContaining("owned-by-a");
            assertThat(mine.isHeldByCurrentThread()).isTrue();
            assertThat(theirs.isLocked()).isTrue();
            assertThat(theirs.tryLock()).isFalse();
        } finally {
            mine.unlock();
        }
    }

    @Test
    void forceUnlockFreesTheLockAndTheFormerHolderHearsOfItFromItsLeaseKeeper() {
        List<LeaseLost> heard = new CopyOnWriteArrayList<>();
        RelockClient holderClient = newClient(b -> b.defaultLease(Duration.ofMillis(900)).leaseLostListener(heard::add));
        RelockLock held = holderClient.lock("forced");
        RelockLock operator = newClient().lock("forced");
        RelockLock next = newClient().lock("forced");

        LockHandle handle = held.acquire();
        assertThat(operator.forceUnlock()).isTrue();
        assertThat(operator.isLocked()).isFalse();
        assertThat(next.tryLock()).as("another client right after forceUnlock").isTrue();
        try {
            // the holder's next renewal (every 300 ms) finds the lock gone
            await().atMost(HANG).until(() -> !heard.isEmpty());
            assertThat(heard).singleElement().satisfies(lost -> {
                assertThat(lost.lockName()).isEqualTo("forced");
                assertThat(lost.fencingToken()).isEqualTo(handle.fencingToken());
                assertThat(lost.reason()).isNotBlank();
            });
            assertThat(handle.state()).isEqualTo(LeaseState.LOST);
            assertThat(handle.isValid()).isFalse();
            assertThat(handle.whenLost().toCompletableFuture()).isCompletedWithValue(heard.get(0));
            assertThat(held.isHeldByCurrentThread()).isFalse();

            assertThatThrownBy(handle::close)
                    .isInstanceOf(LeaseLostException.class)
                    .isInstanceOf(IllegalMonitorStateException.class)
                    .satisfies(e -> assertThat(((LeaseLostException) e).lockName()).isEqualTo("forced"));
            handle.close(); // closing again does nothing
            assertThat(held.getHoldCount()).isZero();
            assertThat(next.isHeldByCurrentThread()).as("the new holder keeps the lock").isTrue();
            assertThat(next.isLocked()).isTrue();
            assertThat(heard).as("a loss is told once").hasSize(1);
        } finally {
            next.unlock();
        }
    }

    @Test
    void unlockAfterForceUnlockThrowsLeaseLostAndTellsTheListener() {
        List<LeaseLost> heard = new CopyOnWriteArrayList<>();
        // the default 30 s lease: no renewal comes before the unlock, the unlock finds the loss
        RelockLock held = newClient(b -> b.leaseLostListener(heard::add)).lock("forced-then-unlocked");
        RelockLock operator = newClient().lock("forced-then-unlocked");
        RelockLock next = newClient().lock("forced-then-unlocked");

        held.lock();
        long token = held.fencingToken().orElseThrow();
        assertThat(operator.forceUnlock()).isTrue();
        assertThat(next.tryLock()).isTrue();
        try {
            assertThatThrownBy(held::unlock)
                    .isInstanceOf(LeaseLostException.class)
                    .hasMessageContaining("forced-then-unlocked");
            assertThat(heard).singleElement().satisfies(lost -> {
                assertThat(lost.lockName()).isEqualTo("forced-then-unlocked");
                assertThat(lost.fencingToken()).isEqualTo(token);
            });
            assertThat(held.getHoldCount()).isZero();
            assertThatThrownBy(held::unlock).as("nothing left to unlock")
                    .isExactlyInstanceOf(IllegalMonitorStateException.class);
            assertThat(next.isLocked()).as("the failed unlock did not release the new holder").isTrue();
            assertThat(next.fencingToken().orElseThrow()).isGreaterThan(token);
        } finally {
            next.unlock();
        }
    }

    @Test
    void eachHoldOfALostReentrantLockMustBeUnlocked() {
        RelockLock held = newClient().lock("lost-twice");
        held.lock();
        held.lock();
        assertThat(newClient().lock("lost-twice").forceUnlock()).isTrue();

        assertThatThrownBy(held::unlock).isInstanceOf(LeaseLostException.class);
        assertThat(held.getHoldCount()).isEqualTo(1);
        assertThat(held.isHeldByCurrentThread()).isFalse();
        assertThatThrownBy(held::lock).as("no re-entry into a lost hold").isInstanceOf(LeaseLostException.class)
                .hasMessageEndingWith("; unlock() the earlier holds first");
        assertThatThrownBy(held::unlock).isInstanceOf(LeaseLostException.class);
        assertThat(held.getHoldCount()).isZero();
        assertThatThrownBy(held::unlock).isExactlyInstanceOf(IllegalMonitorStateException.class);
        // afterwards the thread may take the lock afresh
        assertThat(held.tryLock()).isTrue();
        held.unlock();
    }

    @Test
    void aReEntryThatFindsTheLockForcedOpenThrowsAndTheEarlierHoldMustBeUnlocked() {
        // the default 30 s lease: no renewal comes before the re-entry, the re-entry finds the loss
        RelockLock held = newClient().lock("forced-then-reentered");
        held.lock();
        assertThat(newClient().lock("forced-then-reentered").forceUnlock()).isTrue();

        assertThatThrownBy(held::lock).isInstanceOf(LeaseLostException.class)
                .hasMessageContaining("no longer had it at re-entry")
                .hasMessageEndingWith("; unlock() the earlier holds first");
        assertThat(held.getHoldCount()).isEqualTo(1);
        assertThatThrownBy(held::unlock).isInstanceOf(LeaseLostException.class);
        assertThat(held.getHoldCount()).isZero();
    }

    @Test
    void forceUnlockWakesTheNextWaiter() throws Exception {
        RelockLock held = newClient().lock("forced-with-waiter");
        RelockLock waiting = newClient().lock("forced-with-waiter");
        held.lock();
        var waiter = inNewThread("waiter", () -> {
            boolean got = waiting.tryLock(20, TimeUnit.SECONDS);
            if (got) {
                waiting.unlock();
            }
            return got;
        });
        await().atMost(HANG).until(() -> queue("forced-with-waiter").size() == 1);
        long forced = System.nanoTime();
        assertThat(newClient().lock("forced-with-waiter").forceUnlock()).isTrue();
        // woken by the handoff, not by the end of the holder's 30 s lease
        assertThat(waiter.get(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        assertThat(millisSince(forced)).isLessThan(HANG.toMillis());
        assertThatThrownBy(held::unlock).isInstanceOf(LeaseLostException.class);
    }

    @Test
    void conditionsAreNotSupported() {
        RelockLock lock = newClient().lock("no-conditions");
        assertThatThrownBy(lock::newCondition)
                .isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining("no-conditions");
    }
}
