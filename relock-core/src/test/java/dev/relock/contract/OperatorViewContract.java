package dev.relock.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.relock.LockHandle;
import dev.relock.LockInfo;
import dev.relock.LockKind;
import dev.relock.RelockClient;
import dev.relock.RelockLock;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** What an operator sees, as every deployment must show it: inspect, list, a client's own holds, ping. */
abstract class OperatorViewContract extends ContractBase {

    @Test
    void inspectShowsHolderHoldsTokenLeaseAndWaiters() throws Exception {
        RelockClient holderClient = newClient();
        RelockClient other = newClient();
        RelockLock lock = holderClient.lock("inspected");
        assertThat(other.inspect("inspected").isHeld()).isFalse();
        lock.lock();
        lock.lock();
        CompletableFuture<Void> waiter = inNewThread("waiter", () -> {
            RelockLock waiting = other.lock("inspected");
            waiting.lock();
            waiting.unlock();
            return null;
        });
        await().atMost(HANG).until(() -> other.inspect("inspected").waiters() == 1);

        LockInfo info = other.inspect("inspected");
        assertThat(info.name()).isEqualTo("inspected");
        assertThat(info.kind()).isEqualTo(LockKind.EXCLUSIVE);
        assertThat(info.holders().entrySet()).singleElement().satisfies(holder -> {
            assertThat(holder.getKey()).startsWith(holderClient.clientId() + ":");
            assertThat(holder.getValue()).as("holds").isEqualTo(deployment().countsReentriesInRedis() ? 2 : 1);
        });
        assertThat(info.fencingToken()).isEqualTo(lock.fencingToken().orElseThrow());
        assertThat(info.remainingLease()).isPositive().isLessThanOrEqualTo(holderClient.settings().defaultLease());
        assertThat(lock.remainingLease()).hasValueSatisfying(left -> assertThat(left).isPositive());

        lock.unlock();
        lock.unlock();
        resultOf(waiter);
        LockInfo free = other.inspect("inspected");
        assertThat(free.isHeld()).isFalse();
        assertThat(free.fencingToken()).isZero();
        assertThat(free.remainingLease()).isZero();
        assertThat(free.waiters()).isZero();
        assertThat(lock.remainingLease()).isEmpty();
    }

    @Test
    void listFindsHeldLocksByGlobEvenWithGlobCharactersInNamesAndAClientListsItsOwnHolds() throws Exception {
        RelockClient client = newClient();
        RelockClient other = newClient();
        RelockClient otherPrefix = newClient(b -> b.keyPrefix("elsewhere"));
        assertThat(client.heldLocks()).isEmpty();
        RelockLock released = client.lock("listed:released");
        released.lock();
        released.unlock();
        try (LockHandle first = client.lock("listed:1").acquire();
                LockHandle second = client.readWriteLock("listed:2").readLock().acquire();
                LockHandle braced = client.lock("listed:{3}%").acquire();
                LockHandle elsewhere = other.lock("unlisted").acquire();
                LockHandle hidden = otherPrefix.lock("listed:hidden").acquire()) {
            assertThat(other.list("listed:*")).extracting(LockInfo::name)
                    .containsExactly("listed:1", "listed:2", "listed:{3}%");
            assertThat(other.list("*")).extracting(LockInfo::name)
                    .containsExactly("listed:1", "listed:2", "listed:{3}%", "unlisted");
            assertThat(other.list("listed:{3}*")).as("braces in the glob match braces in names")
                    .extracting(LockInfo::name).containsExactly("listed:{3}%");
            assertThat(otherPrefix.list("*")).as("another key prefix").extracting(LockInfo::name)
                    .containsExactly("listed:hidden");
            assertThat(client.heldLocks()).extracting(held -> held.name() + " " + held.kind() + " " + held.fencingToken())
                    .containsExactlyInAnyOrder("listed:1 exclusive " + first.fencingToken(),
                            "listed:2 shared " + second.fencingToken(), "listed:{3}% exclusive " + braced.fencingToken());
            assertThat(client.heldLocks()).allSatisfy(held -> {
                assertThat(held.owner()).startsWith(client.clientId() + ":");
                assertThat(held.renewed()).isTrue();
            });
        }
        assertThat(client.heldLocks()).isEmpty();
        assertThat(other.list("listed:*")).isEmpty();
        assertThat(otherPrefix.list("*")).isEmpty();
    }

    @Test
    void pingAnswersWithinTheCommandTimeout() {
        RelockClient client = newClient(b -> b.commandTimeout(Duration.ofSeconds(2)));
        assertThat(client.ping()).isPositive().isLessThan(Duration.ofSeconds(2));
    }
}
