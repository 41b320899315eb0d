package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@link LockHandle#releaseAfter}: the hold is given up, but the lock stays taken in Redis until
 * the delay has passed, for every client, and then frees itself without anybody renewing it.
 */
class ReleaseAfterTest extends OneServerTestBase {

    private static final Duration DELAY = Duration.ofSeconds(1);

    @Test
    void theLockStaysTakenUntilTheDelayIsOver() {
        RelockLock mine = newClient().lock("release-after");
        RelockLock theirs = newClient().lock("release-after");
        LockHandle handle = mine.acquire();
        long start = System.nanoTime();
        handle.releaseAfter(DELAY);
        assertThat(handle.state()).isEqualTo(LeaseState.RELEASED);
        assertThat(mine.isHeldByCurrentThread()).isFalse();
        handle.close(); // does nothing now
        if (millisSince(start) < DELAY.toMillis() / 2) {
            assertThat(theirs.tryLock()).as("taken before the delay is over").isFalse();
        }
        await().pollInSameThread().atMost(DELAY.plus(HANG)).until(theirs::tryLock);
        assertThat(millisSince(start)).isGreaterThanOrEqualTo(DELAY.toMillis() - 50);
        theirs.unlock();
    }

    @Test
    void aWaiterQueuedBeforeGetsTheLockWhenTheDelayIsOverNotAtTheOldLeaseEnd() throws Exception {
        // the renewed lease (60 s) is far longer than the delay: the waiter must be told
        RelockLock mine = newClient(b -> b.defaultLease(Duration.ofSeconds(60))).lock("release-after-waiter");
        RelockLock theirs = newClient().lock("release-after-waiter");
        LockHandle handle = mine.acquire();
        CompletableFuture<Optional<LockHandle>> waiting =
                theirs.tryAcquireAsync(Duration.ofSeconds(30)).toCompletableFuture();
        await().atMost(HANG).until(() -> queue("release-after-waiter").size() == 1);
        long start = System.nanoTime();
        handle.releaseAfter(DELAY);
        LockHandle next = waiting.get(DELAY.plus(HANG).toMillis(), TimeUnit.MILLISECONDS).orElseThrow();
        assertThat(millisSince(start)).isGreaterThanOrEqualTo(DELAY.toMillis() - 50);
        assertThat(next.fencingToken()).isGreaterThan(handle.fencingToken());
        next.close();
    }

    @Test
    void readLocksAndPermitsStayTakenToo() throws Exception {
        RelockReadWriteLock readWrite = newClient().readWriteLock("release-after-read");
        RelockLock writer = newClient().readWriteLock("release-after-read").writeLock();
        LockHandle reading = readWrite.readLock().acquire();
        reading.releaseAfter(DELAY);
        long start = System.nanoTime();
        await().pollInSameThread().atMost(DELAY.plus(HANG)).until(writer::tryLock);
        assertThat(millisSince(start)).isGreaterThanOrEqualTo(DELAY.toMillis() - 100);
        writer.unlock();

        RelockSemaphore semaphore = newClient().semaphore("release-after-permits");
        semaphore.trySetPermits(1);
        LockHandle permit = newClient().semaphore("release-after-permits").tryAcquire(1, Duration.ZERO)
                .orElseThrow();
        permit.releaseAfter(DELAY);
        assertThat(semaphore.availablePermits()).isZero();
        await().atMost(DELAY.plus(HANG)).until(() -> semaphore.availablePermits() == 1);
    }

    @Test
    void noDelayIsAPlainClose() {
        RelockLock mine = newClient().lock("release-after-zero");
        mine.acquire().releaseAfter(Duration.ZERO);
        assertThat(mine.isLocked()).isFalse();
        mine.acquire().releaseAfter(Duration.ofSeconds(-5));
        assertThat(mine.isLocked()).isFalse();
        assertThatThrownBy(() -> mine.acquire().releaseAfter(null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("delay");
        mine.unlock();
    }

    @Test
    void anInnerHoldOfAThreadIsGivenUpAtOnce() {
        RelockLock mine = newClient().lock("release-after-reentered");
        LockHandle outer = mine.acquire();
        mine.acquire().releaseAfter(DELAY);
        assertThat(mine.getHoldCount()).isEqualTo(1);
        outer.close();
        assertThat(mine.isLocked()).isFalse();
    }

    @Test
    void aLostLeaseThrowsLikeClose() throws Exception {
        // the lease keeper looks every defaultLease/3
        RelockLock mine = newClient(b -> b.defaultLease(Duration.ofMillis(300))).lock("release-after-lost");
        LockHandle handle = mine.tryAcquire(Duration.ZERO, Duration.ofMillis(100)).orElseThrow();
        handle.whenLost().toCompletableFuture().get(HANG.toMillis(), TimeUnit.MILLISECONDS);
        assertThatThrownBy(() -> handle.releaseAfter(DELAY)).isInstanceOf(LeaseLostException.class)
                .hasMessageContaining("release-after-lost");
    }
}
