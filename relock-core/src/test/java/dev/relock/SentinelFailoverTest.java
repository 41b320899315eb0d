package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.relock.testredis.RedisServer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/**
 * relock on a Sentinel-managed master ({@code redis-sentinel://} URIs): every primitive works
 * through the sentinels, and after a planned failover or a crash of the master the client follows
 * the new master: new acquisitions work, waiters are woken (the wake-up subscription moved with
 * the client), renewals go on for the holds the new master has, and holds it lacks are reported
 * lost.
 */
@Tag("redis")
class SentinelFailoverTest extends SentinelTestBase {

    // outlasts a failover the sentinels delay (none within twice the failover timeout of the last)
    private static final Duration LEASE = Duration.ofSeconds(15);

    enum Fault {
        PLANNED_FAILOVER, MASTER_KILLED
    }

    @Test
    void locksReadWriteLocksAndSemaphoresWorkThroughTheSentinels() throws InterruptedException {
        RelockClient client = newClient(b -> b);
        try (LockHandle lock = client.lock("plain").acquire()) {
            assertThat(hasLock(group.master(), "plain")).isTrue();
            assertThat(client.lock("plain").tryAcquireAsync(Duration.ZERO).toCompletableFuture().join()).isEmpty();
        }
        RelockReadWriteLock readWrite = client.readWriteLock("rw");
        try (LockHandle first = readWrite.readLock().acquire();
                LockHandle second = readWrite.readLock().acquireAsync().toCompletableFuture().join()) {
            assertThat(client.inspect("rw").holders()).hasSize(2);
            assertThat(readWrite.writeLock().tryAcquireAsync(Duration.ZERO).toCompletableFuture().join()).isEmpty();
        }
        RelockSemaphore semaphore = client.semaphore("sem");
        assertThat(semaphore.trySetPermits(2)).isTrue();
        try (PermitHandle permits = semaphore.acquire(2)) {
            assertThat(semaphore.tryAcquire(1, Duration.ZERO)).isEmpty();
        }
        assertThat(semaphore.availablePermits()).isEqualTo(2);
        semaphore.addPermits(-2);
    }

    @ParameterizedTest
    @EnumSource(Fault.class)
    void theClientFollowsTheNewMasterWithItsHoldersAndWaiters(Fault fault) {
        List<LeaseLost> lost = new CopyOnWriteArrayList<>();
        RelockClient client = newClient(b -> b.defaultLease(LEASE).leaseLostListener(lost::add));
        LockHandle holder = client.lock("held").acquire();
        CompletableFuture<LockHandle> waiter = client.lock("held").acquireAsync().toCompletableFuture();
        RedisServer before = group.master();
        await().atMost(FAILOVER).until(() -> "1".equals(before.execute("ZCARD", "relock:{held}:queue")));
        awaitReplicated();

        RedisServer after = fault == Fault.PLANNED_FAILOVER ? group.failover() : group.killMaster();

        assertThat(after).isNotSameAs(before);
        await("a new acquisition through the new master").atMost(FAILOVER).ignoreExceptions()
                .until(() -> client.lock("after-" + fault).tryAcquire(Duration.ZERO).map(handle -> {
                    handle.close();
                    return true;
                }).orElse(false));
        await("the wake-up channel subscribed on the new master").atMost(FAILOVER)
                .until(() -> after.execute("PUBSUB", "CHANNELS", "relock:wake:*").contains(client.clientId()));
        long leaseLeft = Long.parseLong(after.execute("PTTL", "relock:{held}"));
        await("a renewal of the surviving hold on the new master").atMost(FAILOVER)
                .until(() -> Long.parseLong(after.execute("PTTL", "relock:{held}")) > leaseLeft);
        assertThat(holder.state()).isEqualTo(LeaseState.HELD);
        assertThat(waiter).isNotDone();

        holder.close();
        // well before the waiter's own retry at the end of the holder's 15 s lease: the wake-up did it
        LockHandle next = waiter.orTimeout(3, TimeUnit.SECONDS).join();
        assertThat(next.state()).isEqualTo(LeaseState.HELD);
        next.close();
        assertThat(lost).isEmpty();
    }

    @Test
    void aHoldTheNewMasterLacksIsReportedLost() {
        List<LeaseLost> lost = new CopyOnWriteArrayList<>();
        RelockClient client = newClient(b -> b.defaultLease(Duration.ofSeconds(3)).leaseLostListener(lost::add));
        RedisServer before = group.master();
        cutOffReplica();
        LockHandle hold = client.lock("unreplicated").acquire();
        before.kill();
        group.replicas().get(0).resume();
        RedisServer after = group.awaitMasterOtherThan(before);

        assertThat(hasLock(after, "unreplicated")).isFalse();
        await("the lost hold reported").atMost(FAILOVER).until(() -> hold.state() == LeaseState.LOST);
        assertThat(lost).extracting(LeaseLost::lockName).containsExactly("unreplicated");
        assertThat(hold.whenLost().toCompletableFuture().isDone()).isTrue();
        // the lock is free on the new master for anybody
        await().atMost(FAILOVER).ignoreExceptions()
                .until(() -> client.lock("unreplicated").tryAcquire(Duration.ZERO).map(h -> {
                    h.close();
                    return true;
                }).orElse(false));
    }

    /**
     * SENTINEL FAILOVER promotes the replica without stopping the old master: until the sentinels make it a replica
     * of the new one, it takes the writes of clients still connected to it, and its resync then drops them. Fresh
     * holds taken there meanwhile are lost, and their holders are told; with the replication guard none is handed
     * out (the old master's replica is gone, so nothing acknowledges).
     */
    @ParameterizedTest(name = "replication guard: {0}")
    @ValueSource(booleans = {false, true})
    void holdsTakenOnTheOldMasterDuringAPlannedFailoverAreLostWithoutTheGuardAndTheirHoldersTold(boolean guarded)
            throws InterruptedException {
        List<LeaseLost> lost = new CopyOnWriteArrayList<>();
        RelockClient client = newClient(b -> (guarded ? b.replicationGuard(1, Duration.ofMillis(300)) : b)
                .defaultLease(LEASE).leaseLostListener(lost::add));
        RedisServer before = group.master();
        List<LockHandle> taken = new CopyOnWriteArrayList<>();
        AtomicBoolean stop = new AtomicBoolean();
        Thread taking = new Thread(() -> {
            for (int i = 0; !stop.get(); i++) {
                try {
                    client.lock("probe-" + i).tryAcquire(Duration.ZERO).ifPresent(taken::add);
                } catch (RelockException e) {
                    // the failover under way: the next name is tried
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "taking-fresh-locks");
        taking.start();
        try {
            await().atMost(FAILOVER).until(() -> taken.size() >= 10);
            RedisServer after = group.failover();
            // the window ends once the old master follows the new one and the client took a hold there
            await().atMost(FAILOVER).until(() -> before.execute("INFO", "replication").contains("role:slave"));
            int takenSoFar = taken.size();
            await().atMost(FAILOVER).until(() -> taken.size() > takenSoFar + 10);
            stop.set(true);
            taking.join(FAILOVER.toMillis());

            List<LockHandle> missing = taken.stream().filter(hold -> !hasLock(after, hold.name())).toList();
            if (guarded) {
                assertThat(missing).as("guarded holds the new master lacks").isEmpty();
            } else {
                assertThat(missing).as("holds the new master lacks, of %d taken", taken.size()).isNotEmpty();
                await("every holder of a lost hold told").atMost(FAILOVER)
                        .until(() -> missing.stream().allMatch(hold -> hold.state() == LeaseState.LOST));
                assertThat(lost).extracting(LeaseLost::lockName)
                        .containsAll(missing.stream().map(LockHandle::name).toList());
            }
        } finally {
            stop.set(true);
            taking.join(FAILOVER.toMillis());
            for (LockHandle hold : taken) {
                if (hold.state() == LeaseState.HELD) {
                    try {
                        hold.close();
                    } catch (RelockException e) {
                        // lost meanwhile: nothing left to release
                    }
                }
            }
        }
    }
}
