package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The owning thread may take a lock again and must give it up as often; nobody else may enter meanwhile. */
class ReentrancyTest extends OneServerTestBase {

    @Test
    void lockTwiceNeedsTwoUnlocksBeforeAnotherClientGetsIt() {
        RelockLock lock = newClient().lock("reentrant");
        RelockLock elsewhere = newClient().lock("reentrant");

        lock.lock();
        lock.lock();
        assertThat(lock.getHoldCount()).isEqualTo(2);
        assertThat(lock.isHeldByCurrentThread()).isTrue();
        assertThat(lock.isLocked()).isTrue();

        lock.unlock();
        assertThat(lock.getHoldCount()).isEqualTo(1);
        assertThat(lock.isHeldByCurrentThread()).isTrue();
        assertThat(elsewhere.tryLock()).as("another client while one hold is left").isFalse();

        lock.unlock();
        assertThat(lock.getHoldCount()).isZero();
        assertThat(lock.isHeldByCurrentThread()).isFalse();
        assertThat(lock.isLocked()).isFalse();
        assertThat(elsewhere.tryLock()).as("another client after the last unlock").isTrue();
        elsewhere.unlock();
    }

    @Test
    void holdsAreCountedInRedisToo() {
        RelockClient client = newClient();
        RelockLock lock = client.lock("counted");
        lock.lock();
        lock.lock();
        lock.lock();
        String owner = client.clientId() + ":" + Thread.currentThread().getId();
        assertThat(admin().hget("relock:{counted}", owner)).isEqualTo("3");
        lock.unlock();
        assertThat(admin().hget("relock:{counted}", owner)).isEqualTo("2");
        lock.unlock();
        lock.unlock();
        assertThat(admin().exists("relock:{counted}")).isZero();
    }

    @Test
    void anotherThreadOfTheSameClientCannotEnterWhileHeld() throws Exception {
        RelockClient client = newClient();
        RelockLock lock = client.lock("same-client");
        lock.lock();
        try {
            assertThat(resultOf(inNewThread("same-client-try", () -> lock.tryLock()))).isFalse();
            assertThat(resultOf(inNewThread("same-client-try-wait", () -> lock.tryLock(200, TimeUnit.MILLISECONDS))))
                    .isFalse();
            // a second lock object of the same name and client is the same lock
            RelockLock sameName = client.lock("same-client");
            assertThat(resultOf(inNewThread("same-client-other-object", () -> sameName.tryLock()))).isFalse();
            assertThat(resultOf(inNewThread("same-client-holds", () -> sameName.getHoldCount()))).isZero();
            assertThat(sameName.isHeldByCurrentThread()).isTrue();
            assertThat(sameName.getHoldCount()).isEqualTo(1);
        } finally {
            lock.unlock();
        }
        assertThat(resultOf(inNewThread("same-client-after", () -> {
            boolean got = lock.tryLock();
            if (got) {
                lock.unlock();
            }
            return got;
        }))).isTrue();
    }

    @Test
    void reentryByTryLockSucceedsEvenWithWaitersQueued() throws Exception {
        RelockLock lock = newClient().lock("reenter-queued");
        RelockLock waiterLock = newClient().lock("reenter-queued");
        lock.lock();
        CompletableFuture<Boolean> waiter = inNewThread("waiter", () -> {
            boolean got = waiterLock.tryLock(20, TimeUnit.SECONDS);
            if (got) {
                waiterLock.unlock();
            }
            return got;
        });
        await().atMost(HANG).until(() -> queue("reenter-queued").size() == 1);

        assertThat(lock.tryLock()).as("re-entry does not queue behind waiters").isTrue();
        assertThat(lock.tryLock(0, TimeUnit.SECONDS)).isTrue();
        assertThat(lock.getHoldCount()).isEqualTo(3);
        lock.unlock();
        lock.unlock();
        assertThat(waiter).as("the waiter while a hold is left").isNotDone();
        lock.unlock();
        assertThat(resultOf(waiter)).isTrue();
    }

    @Test
    void reentryKeepsTheFencingTokenAndNestedHandlesReleaseOneHoldEach() {
        RelockLock lock = newClient().lock("handles");
        RelockLock elsewhere = newClient().lock("handles");

        try (LockHandle outer = lock.acquire()) {
            long token = outer.fencingToken();
            assertThat(lock.fencingToken()).hasValue(token);
            try (LockHandle inner = lock.acquire()) {
                assertThat(inner.fencingToken()).isEqualTo(token);
                assertThat(inner.name()).isEqualTo("handles");
                assertThat(lock.getHoldCount()).isEqualTo(2);
                assertThat(lock.fencingToken()).hasValue(token);
            }
            assertThat(lock.getHoldCount()).isEqualTo(1);
            assertThat(outer.isValid()).isTrue();
            assertThat(elsewhere.tryLock()).isFalse();
        }
        assertThat(lock.getHoldCount()).isZero();
        assertThat(lock.isLocked()).isFalse();
        assertThat(lock.fencingToken()).as("token of a free lock").isEmpty();
    }

    @Test
    void freshAcquisitionsGetHigherTokensButReentriesDoNot() {
        RelockLock lock = newClient().lock("tokens");
        long first;
        try (LockHandle held = lock.acquire()) {
            first = held.fencingToken();
            try (LockHandle again = lock.acquire()) {
                assertThat(again.fencingToken()).isEqualTo(first);
            }
        }
        try (LockHandle held = lock.acquire()) {
            assertThat(held.fencingToken()).isGreaterThan(first);
        }
    }

    @Test
    void closingAHandleTwiceReleasesOnlyOneHold() {
        RelockLock lock = newClient().lock("close-twice");
        LockHandle outer = lock.acquire();
        LockHandle inner = lock.acquire();
        inner.close();
        inner.close();
        assertThat(inner.state()).isEqualTo(LeaseState.RELEASED);
        assertThat(inner.isValid()).isFalse();
        assertThat(lock.getHoldCount()).isEqualTo(1);
        assertThat(outer.state()).isEqualTo(LeaseState.HELD);
        assertThat(lock.isLocked()).isTrue();
        outer.close();
        assertThat(outer.state()).isEqualTo(LeaseState.RELEASED);
        assertThat(lock.isLocked()).isFalse();
    }

    @Test
    void handlesMayBeClosedOutOfOrderAndFromAnotherThread() throws Exception {
        RelockLock lock = newClient().lock("out-of-order");
        LockHandle outer = lock.acquire();
        LockHandle inner = lock.acquire();
        outer.close();
        assertThat(lock.getHoldCount()).isEqualTo(1);
        assertThat(inner.isValid()).isTrue();
        resultOf(inNewThread("closer", () -> {
            inner.close();
            return null;
        }));
        assertThat(lock.getHoldCount()).isZero();
        assertThat(lock.isLocked()).isFalse();
    }

    @Test
    void unlockingMoreOftenThanLockedThrowsIllegalMonitorState() {
        RelockLock lock = newClient().lock("over-unlock");
        lock.lock();
        lock.lock();
        lock.unlock();
        lock.unlock();
        assertThatThrownBy(lock::unlock)
                .isExactlyInstanceOf(IllegalMonitorStateException.class)
                .hasMessageContaining("over-unlock");
        assertThat(lock.getHoldCount()).isZero();
        // the failed unlock changed nothing: the lock still works
        assertThat(lock.tryLock()).isTrue();
        lock.unlock();
    }

    @Test
    void reentryWithAnExplicitLeaseExtendsButNeverShortensTheLease() {
        RelockLock lock = newClient().lock("reenter-lease");
        lock.lock(10, TimeUnit.SECONDS);
        lock.lock(1, TimeUnit.SECONDS);
        assertThat(lock.remainingLease()).hasValueSatisfying(
                left -> assertThat(left).isGreaterThan(Duration.ofSeconds(5)));
        lock.unlock();
        lock.unlock();
        assertThat(lock.isLocked()).isFalse();
    }
}
