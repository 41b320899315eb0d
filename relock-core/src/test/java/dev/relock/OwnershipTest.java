package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import static org.awaitility.Awaitility.await;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * On one Redis a re-entry, and the release of a hold that is not the owner's last, is a round trip that
 * finds a lock forced open (docs/guarantees.md: "A re-entry proves the lease is still there"); Redlock counts re-entries
 * in the client only and notices the loss at the lease keeper's next look or the last release. The rest of
 * ownership and forceUnlock, on every topology, is in contract/LockContract.
 */
@Tag("redis")
class OwnershipTest extends OneServerTestBase {

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
        // the default 30 s lease: no renewal comes before the re-entry. The re-entry finds the loss in Redis, unless
        // the message force-unlock.lua sends the holder's client was there first
        RelockLock held = newClient().lock("forced-then-reentered");
        held.lock();
        assertThat(newClient().lock("forced-then-reentered").forceUnlock()).isTrue();

        assertThatThrownBy(held::lock).isInstanceOf(LeaseLostException.class)
                .satisfies(lost -> assertThat(lost.getMessage())
                        .containsAnyOf("no longer had it at re-entry", "an operator forced it open"))
                .hasMessageEndingWith("; unlock() the earlier holds first");
        assertThat(held.getHoldCount()).isEqualTo(1);
        assertThatThrownBy(held::unlock).isInstanceOf(LeaseLostException.class);
        assertThat(held.getHoldCount()).isZero();
    }

    /**
     * A thread that asks for a lock after it was forced open and taken by another client waits for that client, even
     * while a sibling thread of its own client still believes it holds the lock and then gives it up. (A hand-off of
     * the sibling's hold inside the JVM, without asking Redis, let it in beside the other client with a smaller
     * token; that change was reverted.) The sibling's hold is one it waited for, as a hand-off would pass on.
     */
    @Test
    void aThreadAskingAfterTheLockWasForcedOpenAndRetakenIsNotLetInBySiblingsRelease() throws Exception {
        RelockClient client = newClient();
        RelockLock lock = client.lock("forced-sibling");
        lock.lock();
        CountDownLatch siblingHolds = new CountDownLatch(1);
        CountDownLatch siblingMayRelease = new CountDownLatch(1);
        AtomicReference<Thread> sibling = new AtomicReference<>();
        CompletableFuture<Object> siblingDone = inNewThread("sibling", () -> {
            sibling.set(Thread.currentThread());
            lock.lock();
            siblingHolds.countDown();
            assertThat(siblingMayRelease.await(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
            try {
                lock.unlock();
                return "unlocked";
            } catch (RuntimeException e) {
                return e;
            }
        });
        await().atMost(HANG).until(() -> parked(sibling.get()));
        lock.unlock();
        assertThat(siblingHolds.await(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();

        RelockLock other = newClient().lock("forced-sibling");
        assertThat(other.forceUnlock()).isTrue();
        assertThat(other.tryLock()).isTrue();
        long othersToken = other.fencingToken().orElseThrow();

        AtomicReference<Thread> later = new AtomicReference<>();
        CompletableFuture<Long> laterToken = inNewThread("later", () -> {
            later.set(Thread.currentThread());
            if (!lock.tryLock(2, TimeUnit.SECONDS)) {
                return -1L;
            }
            long token = lock.fencingToken().orElseThrow();
            lock.unlock();
            return token;
        });
        await().atMost(HANG).until(() -> parked(later.get()));
        siblingMayRelease.countDown();
        assertThat(resultOf(siblingDone)).as("the sibling's unlock of a lock forced open")
                .isInstanceOf(LeaseLostException.class);
        long token = resultOf(laterToken);
        assertThat(token).as("the later thread got the lock while the other client held it, with token " + token
                + " against the other's " + othersToken).isEqualTo(-1L);
        other.unlock();
    }

    private static boolean parked(Thread thread) {
        return thread != null && (thread.getState() == Thread.State.WAITING
                || thread.getState() == Thread.State.TIMED_WAITING);
    }
}
