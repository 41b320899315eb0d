package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@link LockHandle#releaseAfter} on one Redis tells the waiter at the head of the queue to try again
 * when the delay is over (release-after.lua); Redlock announces nothing, and its waiters find the lock
 * free by the lease they last saw. The rest of releaseAfter, on every topology, is in contract/LockContract.
 */
class ReleaseAfterTest extends OneServerTestBase {

    private static final Duration DELAY = Duration.ofSeconds(1);

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
}
