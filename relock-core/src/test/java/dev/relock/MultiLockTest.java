package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The single-server multi-lock's own mechanics: one script for free locks (the rest is in contract/MultiLockContract). */
@Tag("redis")
class MultiLockTest extends OneServerTestBase {

    @Test
    void freeLocksAreTakenInOneScriptCall() throws Exception {
        RelockMultiLock three = newClient().multiLock("one-call:1", "one-call:2", "one-call:3");
        three.tryLock(); // loads the script; both paths are then warm
        three.unlock();
        long before = scriptCalls();
        try (MultiLockHandle held = three.acquire()) {
            assertThat(scriptCalls() - before).as("script calls to take 3 free locks").isEqualTo(1);
            assertThat(held.fencingTokens()).hasSize(3);
            assertThat(held.fencingTokens().values()).allMatch(token -> token > 0);
        }
    }

    /**
     * A multi-lock taken one by one holds its first lock while it waits for the next; when that first hold is lost
     * meanwhile (here its key is deleted, as a restart without persistence would; in the fault campaign its renewals'
     * replies came too late), the acquisition gives everything up and starts again: it never returns a member already
     * lost. Before, lock() returned with the lost hold, told to the lease-lost listener before the multi-lock's holder
     * began, while another client held that lock (the campaign's multi-lock row under late replies: an untold overlap,
     * its stale write refused by fencing).
     */
    @Test
    void aMemberLostWhileTheNextIsAwaitedIsTakenAgainBeforeTheMultiLockReturns() throws Exception {
        List<LeaseLost> lost = new CopyOnWriteArrayList<>();
        RelockClient client = newClient(builder -> builder.defaultLease(Duration.ofSeconds(1))
                .leaseLostListener(lost::add));
        RelockLock second = newClient().lock("lost-member:b");
        second.lock();
        CompletableFuture<long[]> taken = inNewThread("multi", () -> {
            RelockMultiLock both = client.multiLock("lost-member:a", "lost-member:b");
            both.lock();
            try {
                RelockLock first = client.lock("lost-member:a");
                return new long[] {first.isHeldByCurrentThread() ? 1 : 0, first.fencingToken().orElseThrow()};
            } finally {
                both.unlock();
            }
        });
        await().atMost(HANG).until(() -> client.heldLocks().size() == 1);
        long firstToken = client.heldLocks().get(0).fencingToken();
        admin().del("relock:{lost-member:a}");
        await().atMost(HANG).until(() -> !lost.isEmpty());
        second.unlock();

        long[] after = taken.get(HANG.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(lost).singleElement().satisfies(event -> assertThat(event.fencingToken()).isEqualTo(firstToken));
        assertThat(after[0]).as("the first lock held when the multi-lock returned").isEqualTo(1);
        assertThat(after[1]).as("its fencing token: a new hold's").isGreaterThan(firstToken);
    }
}
