package dev.relock.redlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.relock.LeaseLost;
import dev.relock.LeaseLostException;
import dev.relock.LeaseState;
import dev.relock.LockHandle;
import dev.relock.RelockClient;
import dev.relock.RelockLock;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Servers that restart empty (no persistence) under a held Redlock lock. A holder whose majority
 * lost the key is told at its next renewal. A majority restarted at once can hand the lock to a
 * second holder while the first still counts on it (the known Redlock limit, shown and counted
 * here); restarted only after the longest lease has passed, it cannot.
 */
@Tag("redis")
class RedlockRestartTest extends RedlockTestBase {

    private static final Duration LEASE = Duration.ofMillis(900);
    private static final Duration COMMAND_TIMEOUT = Duration.ofMillis(500);

    @Override
    int nodeCount() {
        return 5;
    }

    private RelockClient client() {
        return newClient(b -> b.defaultLease(LEASE).commandTimeout(COMMAND_TIMEOUT));
    }

    /** Kills these nodes, then starts them again at once, empty. */
    private void restartEmptyAtOnce(int... indexes) {
        for (int i : indexes) {
            nodes.get(i).kill();
        }
        for (int i : indexes) {
            nodes.get(i).restart();
        }
    }

    @Test
    void aHolderWhoseMajorityLostTheKeyIsToldAtTheNextRenewal() throws Exception {
        RelockLock lock = client().lock("forgotten");
        LockHandle handle = lock.acquire();
        restartEmptyAtOnce(0, 1, 2);
        LeaseLost event = handle.whenLost().toCompletableFuture().get(HANG.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(event.lockName()).isEqualTo("forgotten");
        assertThat(event.reason()).contains("majority");
        assertThat(event.fencingToken()).isEqualTo(handle.fencingToken());
        await().atMost(HANG).until(() -> !lost.isEmpty());
        assertThat(lost).containsExactly(event);
        assertThat(handle.state()).isEqualTo(LeaseState.LOST);
        assertThat(lock.isHeldByCurrentThread()).isFalse();
        assertThatThrownBy(handle::close).isInstanceOf(LeaseLostException.class).hasMessageContaining("forgotten");
        // what was left of it (and what the renewal took back on the empty nodes) is cleaned up
        await().atMost(HANG).until(() -> nodesHolding("forgotten") == 0);
    }

    @Test
    void aMinorityRestartedEmptyIsTakenBackByTheRenewal() throws Exception {
        RelockLock lock = client().lock("healed");
        try (LockHandle handle = lock.acquire()) {
            restartEmptyAtOnce(0, 1);
            await().atMost(HANG).until(() -> nodesHolding("healed") == 5);
            assertThat(handle.isValid()).isTrue();
        }
        assertThat(lost).isEmpty();
    }

    @Test
    void aMajorityRestartedEmptyAtOnceCanBreakExclusion() throws Exception {
        RelockLock first = client().lock("restarted");
        RelockLock second = client().lock("restarted");
        int rounds = 3;
        int bothHeld = 0;
        for (int round = 0; round < rounds; round++) {
            LockHandle held = first.tryAcquire(HANG, Duration.ofSeconds(20)).orElseThrow();
            restartEmptyAtOnce(0, 1, 2);
            awaitReconnected();
            Optional<LockHandle> alsoHeld = second.tryAcquire(Duration.ZERO);
            if (alsoHeld.isPresent() && held.isValid()) {
                bothHeld++;
                assertThat(alsoHeld.get().fencingToken()).as("fencing still tells them apart")
                        .isGreaterThan(held.fencingToken());
            }
            alsoHeld.ifPresent(LockHandle::close);
            // the first holder finds out at its release: a majority no longer had its key
            assertThatThrownBy(held::close).isInstanceOf(LeaseLostException.class);
        }
        assertThat(bothHeld).as("rounds in which two clients held the lock at once").isEqualTo(rounds);
    }

    @Test
    void aMajorityRestartedOnlyAfterTheLongestLeaseCannotBreakExclusion() throws Exception {
        RelockLock first = client().lock("delayed");
        RelockLock second = client().lock("delayed");
        LockHandle held = first.acquire();
        long down = System.nanoTime();
        for (int i = 0; i < 3; i++) {
            nodes.get(i).kill();
        }
        // no majority can renew it: the holder gives it up when its validity ends
        held.whenLost().toCompletableFuture().get(HANG.toMillis(), TimeUnit.MILLISECONDS);
        await().atMost(HANG).until(() -> millisSince(down) > LEASE.toMillis());
        for (int i = 0; i < 3; i++) {
            nodes.get(i).restart();
        }
        try (LockHandle next = second.tryAcquire(HANG).orElseThrow()) {
            assertThat(held.state()).as("the first holder stopped counting on it before").isEqualTo(LeaseState.LOST);
            assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
        }
        assertThatThrownBy(held::close).isInstanceOf(LeaseLostException.class);
    }
}
