package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.relock.internal.script.SingleServerScripts;
import io.lettuce.core.ScriptOutputType;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@link LockHandle#releaseAfter} on one Redis tells the waiter at the head of the queue to try again
 * when the delay is over (release-after.lua); Redlock announces nothing, and its waiters find the lock
 * free by the lease they last saw. A renewal that reaches Redis after the release-after (sent before it, over
 * another connection) leaves the lease it cut, and the owner's next acquisition is renewed as any other. The rest
 * of releaseAfter, on every topology, is in contract/LockContract; with a replication guard, in ReplicationGuardTest.
 */
@Tag("redis")
class ReleaseAfterTest extends OneServerTestBase {

    private static final Duration DELAY = Duration.ofSeconds(1);
    // a scripted owner: '<client id>:<thread id>', of a client nobody runs
    private static final String OWNER = LockScripts.NOBODY + ":1";

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
    void aRenewalRunAfterAReleaseAfterLeavesTheWriteLeaseItCutAndTheOwnersNextAcquisitionIsRenewed() {
        LockScripts scripts = new LockScripts(admin());
        String name = "cut-write";
        String key = "relock:{" + name + "}";
        long token = scripts.acquire(name, OWNER, "0", "").get(1);
        assertThat(scripts.releaseAfter(name, OWNER, "w", DELAY.toMillis(), token)).isZero();

        // sent before the release-after (a lease keeper's renewal or an extension), run after it
        List<Long> late = scripts.renew(name, OWNER, "w", 30_000);
        assertThat(admin().pttl(key)).as("ms the lock stays taken").isBetween(1L, DELAY.toMillis());
        assertThat(late).as("renew.lua's answer: given up").containsExactly(2L);

        // the owner's next acquisition takes its hold, still taken, anew: renewed from then on
        assertThat(scripts.acquire(name, OWNER, "0", "")).containsExactly(1L, token, 1L);
        assertThat(scripts.renew(name, OWNER, "w", 60_000)).containsExactly(1L);
        assertThat(admin().pttl(key)).isGreaterThan(30_000L);
        assertThat(scripts.release(name, OWNER, token)).isZero();
    }

    @Test
    void aRenewalRunAfterAReleaseAfterLeavesTheReadLeaseItCutAndTheOwnersNextAcquisitionIsRenewed() {
        LockScripts scripts = new LockScripts(admin());
        String name = "cut-read";
        String[] keys = LockScripts.keys(name);
        long token = scripts.acquireRead(name, OWNER, "0", "").get(1);
        assertThat(scripts.releaseAfter(name, OWNER, "r", DELAY.toMillis(), token)).isZero();

        List<Long> late = scripts.renew(name, OWNER, "r", 30_000);
        assertThat(admin().pttl(keys[0])).as("ms the lock stays taken").isBetween(1L, DELAY.toMillis());
        assertThat(admin().zscore(keys[4], OWNER)).as("the read lease's end, server ms")
                .isLessThanOrEqualTo(serverMillis() + DELAY.toMillis());
        assertThat(late).as("renew.lua's answer: given up").containsExactly(2L);

        // a fresh read hold has a token of its own, which the mark does not name
        List<Long> again = scripts.acquireRead(name, OWNER, "0", "");
        assertThat(again.get(0)).isEqualTo(1L);
        assertThat(scripts.renew(name, OWNER, "r", 60_000)).containsExactly(1L);
        assertThat(admin().pttl(keys[0])).isGreaterThan(30_000L);
        assertThat(scripts.releaseRead(name, OWNER, again.get(1))).isZero();
    }

    @Test
    void aRenewalRunAfterAReleaseAfterLeavesThePermitLeaseItCut() throws InterruptedException {
        RelockSemaphore semaphore = newClient().semaphore("cut-permits");
        assertThat(semaphore.trySetPermits(1)).isTrue();
        PermitHandle permit = semaphore.tryAcquire(1, Duration.ZERO).orElseThrow();
        String hash = "relock:{cut-permits}:sem";
        String leases = hash + ":leases";
        String holder = admin().zrange(leases, 0, 0).get(0);
        permit.releaseAfter(DELAY);

        List<Long> renewed = admin().eval(SingleServerScripts.RENEW.body(), ScriptOutputType.MULTI,
                new String[] {hash, leases}, holder, "30000", "s");
        assertThat(admin().zscore(leases, holder)).as("the permits' lease end, server ms")
                .isLessThanOrEqualTo(serverMillis() + DELAY.toMillis());
        assertThat(renewed).as("renew.lua's answer: given up").containsExactly(2L);
    }

    /**
     * The same thread's next acquisition of the lock, while the hold it gave up with a delay is still taken, takes that
     * hold anew: the lease keeper renews it as any other, and it is not lost.
     */
    @Test
    void theOwnersNextAcquisitionDuringTheDelayIsRenewedByTheLeaseKeeper() {
        long lease = 3000;
        RelockLock lock = newClient(b -> b.defaultLease(Duration.ofMillis(lease))).lock("cut-then-again");
        String key = "relock:{cut-then-again}";
        // longer than the first renewal takes to come due (a third of the lease)
        lock.acquire().releaseAfter(Duration.ofMillis(2 * lease / 3));
        LockHandle again = lock.acquire();
        long acquired = System.nanoTime();

        // the acquisition set the lease; without renewals it only runs down: more left than that is a renewal's
        await().atMost(HANG).until(() -> admin().pttl(key) > lease - millisSince(acquired) + 500);
        assertThat(again.state()).isEqualTo(LeaseState.HELD);
        again.close();
    }

    /** Redis's clock, in ms. */
    private long serverMillis() {
        List<String> time = admin().time();
        return Long.parseLong(time.get(0)) * 1000 + Long.parseLong(time.get(1)) / 1000;
    }
}
