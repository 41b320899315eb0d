package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import dev.relock.ReplicationGuard.OnShortfall;
import dev.relock.internal.single.ServerFeatures;
import dev.relock.testredis.RedisCluster;
import dev.relock.testredis.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The replication guard on a Redis Cluster of three masters with one replica each: every kind of
 * acquisition is on the replica of its slot's master when it is handed out, a replica that cannot
 * acknowledge makes acquisitions fail or end as the guard says with nothing left behind, and the
 * guard follows a slot that moved (MOVED on its node connection) and a failover. Every test leaves
 * the cluster healthy with every node running and unpaused.
 */
@Tag("redis")
class ClusterReplicationGuardTest extends ReplicatedClusterTestBase {

    private static final Duration GUARD_TIMEOUT = Duration.ofMillis(300);
    private static final Duration HANG = RedisClusterTest.HANG;

    private RelockClient guarded(OnShortfall onShortfall) {
        return newClient(b -> b.replicationGuard(new ReplicationGuard(1, GUARD_TIMEOUT, onShortfall)));
    }

    /** Another name whose keys are in the same slot as {@code name}'s. */
    private static String nameInSlotOf(String name, String stem) {
        int slot = RedisCluster.slot(lockKey(name));
        for (int i = 0; ; i++) {
            if (RedisCluster.slot(lockKey(stem + i)) == slot) {
                return stem + i;
            }
        }
    }

    private static String lockKey(String name) {
        return "relock:{" + name + "}";
    }

    private static boolean has(RedisServer node, String key) {
        // a cluster replica answers reads only on a READONLY connection (the fixture keeps one per node)
        node.execute("READONLY");
        return "1".equals(node.execute("EXISTS", key));
    }

    @Test
    void everyKindOfGuardedAcquisitionIsOnTheSlotsReplicaWhenHandedOut() throws Exception {
        RelockClient client = guarded(OnShortfall.RELEASE_AND_RETRY);
        for (RedisServer master : cluster.masters()) {
            RedisServer replica = cluster.replicaOf(master);
            String name = nameOn(master, "guarded-");
            try (LockHandle held = client.lock(name).acquire()) {
                assertThat(has(replica, lockKey(name))).as("lock on %s", replica).isTrue();
            }
            LockHandle async = client.lock(name).tryAcquireAsync(HANG).toCompletableFuture()
                    .get(HANG.toMillis(), TimeUnit.MILLISECONDS).orElseThrow();
            assertThat(has(replica, lockKey(name))).isTrue();
            async.close();
            try (LockHandle read = client.readWriteLock(name).readLock().acquire()) {
                assertThat(has(replica, lockKey(name))).isTrue();
            }
            String other = nameInSlotOf(name, name + "-other-");
            try (MultiLockHandle both = client.multiLock(name, other).acquire()) {
                assertThat(has(replica, lockKey(name))).isTrue();
                assertThat(has(replica, lockKey(other))).isTrue();
            }
            RelockSemaphore semaphore = client.semaphore(name);
            semaphore.trySetPermits(2);
            try (PermitHandle permit = semaphore.tryAcquire(1, HANG).orElseThrow()) {
                assertThat(has(replica, lockKey(name) + ":sem")).isTrue();
                assertThat(client.inspectSemaphore(name).holders()).hasSize(1);
            }
        }
    }

    @Test
    void withTheSlotsReplicaStalledAnAcquisitionEndsNotAcquiredAndLeavesNoKey() throws Exception {
        RelockClient client = guarded(OnShortfall.RELEASE_AND_RETRY);
        RedisServer master = cluster.masters().get(0);
        String name = nameOn(master, "stalled-");
        String elsewhere = nameOn(cluster.masters().get(1), "healthy-");
        cluster.replicaOf(master).pause();

        Optional<LockHandle> blocking = client.lock(name).tryAcquire(Duration.ofMillis(500));
        Optional<LockHandle> async = client.lock(nameInSlotOf(name, name + "-async-")).tryAcquireAsync(Duration.ZERO)
                .toCompletableFuture().get(HANG.toMillis(), TimeUnit.MILLISECONDS);
        boolean multi = client.multiLock(name, nameInSlotOf(name, name + "-m-")).tryLock();

        assertThat(blocking).isEmpty();
        assertThat(async).isEmpty();
        assertThat(multi).isFalse();
        assertThat(client.heldLocks()).isEmpty();
        // the undo of a refused attempt is sent without waiting for its reply, after the attempt on its connection
        await().atMost(HANG).untilAsserted(() -> {
            List<String> left = new ArrayList<>();
            for (String key : master.execute("KEYS", "relock:*").replaceAll("[\\[\\]]", "").split(", ")) {
                // fencing counters stay by design, and the open client's identity record; holds and queue entries
                // must not
                if (!key.isEmpty() && !key.endsWith(":fence") && !key.contains(":client:{")) {
                    left.add(key);
                }
            }
            assertThat(left).as("keys left on %s", master).isEmpty();
        });
        // the other masters' replicas still acknowledge
        try (LockHandle held = client.lock(elsewhere).tryAcquire(HANG).orElseThrow()) {
            assertThat(held.isValid()).isTrue();
        }
    }

    @Test
    void failOnShortfallThrowsNamingTheLockAndTheReplicas() {
        RelockClient client = guarded(OnShortfall.FAIL);
        RedisServer master = cluster.masters().get(2);
        String name = nameOn(master, "failing-");
        cluster.replicaOf(master).pause();

        assertThatThrownBy(() -> client.lock(name).acquire())
                .isInstanceOfSatisfying(ReplicationShortfallException.class, e -> {
                    assertThat(e.lockName()).isEqualTo(name);
                    assertThat(e.acknowledged()).isZero();
                    assertThat(e.required()).isEqualTo(1);
                })
                .hasMessageContaining("'" + name + "'")
                .hasMessageContaining("0 of the 1 required replicas")
                .hasMessageContaining(String.valueOf(master.port()));
        client.semaphore(name).trySetPermits(1);
        CompletableFuture<PermitHandle> async = client.semaphore(name).acquireAsync(1).toCompletableFuture();
        assertThat(async).failsWithin(HANG).withThrowableThat().havingRootCause()
                .isInstanceOf(ReplicationShortfallException.class);
        assertThat(has(master, lockKey(name))).isFalse();
        assertThat(client.heldLocks()).isEmpty();
    }

    @Test
    void theGuardFollowsASlotThatMovedAndAFailover() throws Exception {
        RelockClient client = guarded(OnShortfall.FAIL);
        RelockClient other = newClient(UnaryOperator.identity());
        RedisServer source = cluster.masters().get(0);
        RedisServer target = cluster.masters().get(1);
        String name = nameOn(source, "moving-");
        client.lock(name).acquire().close(); // the guard's connection to the source is open now

        cluster.migrateSlot(RedisCluster.slot(lockKey(name)), target);
        // the client's topology still names the source: MOVED, a fresh topology, the target
        try (LockHandle moved = client.lock(name).acquire()) {
            assertThat(has(target, lockKey(name))).isTrue();
            assertThat(has(cluster.replicaOf(target), lockKey(name))).isTrue();
            assertThat(other.lock(name).tryLock()).isFalse();
        }

        RedisServer promoted = cluster.failover(cluster.replicaOf(target));
        try (LockHandle afterFailover = client.lock(name).tryAcquire(HANG).orElseThrow()) {
            assertThat(has(promoted, lockKey(name))).isTrue();
            assertThat(has(target, lockKey(name))).as("on the demoted master, now a replica").isTrue();
            assertThat(other.lock(name).tryLock()).isFalse();
        }
    }

    @Test
    void aGuardedHoldSurvivesTheCrashOfItsMasterAndAcquisitionsGoOnOnThePromotedReplica() throws Exception {
        RelockClient client = guarded(OnShortfall.RELEASE_AND_RETRY);
        RedisServer master = cluster.masters().get(1);
        String name = nameOn(master, "crash-");
        LockHandle held = client.lock(name).acquire();

        RedisServer promoted = cluster.killMaster(master);

        // handed out only once the replica had it, so the promoted replica has it
        assertThat(has(promoted, lockKey(name))).isTrue();
        // the guard's connection to the dead master is gone: a waiting acquisition opens one to the
        // new master, and falls short there until that has a replica again (the old master, restarted)
        String next = nameInSlotOf(name, name + "-next-");
        CompletableFuture<LockHandle> waiting = client.lock(next).acquireAsync().toCompletableFuture();
        master.restart();
        cluster.awaitHealthy();
        LockHandle after = waiting.get(HANG.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(has(promoted, lockKey(next))).isTrue();
        assertThat(has(master, lockKey(next))).as("on the old master, now the replica").isTrue();
        assertThat(held.isValid()).isTrue();
        after.close();
        held.close();
        assertThat(has(promoted, lockKey(name))).isFalse();
    }

    /**
     * WAIT counts the writes of its own connection: re-sent on a new socket it would count none and
     * acknowledge at once. The guard's node connections never reconnect, so a WAIT whose connection
     * is cut fails the acquisition instead of handing out a hold the replica does not have.
     */
    @Test
    void aWaitWhoseConnectionIsCutHandsOutNoHold() throws Exception {
        RelockClient client = newClient(b -> b.commandTimeout(Duration.ofSeconds(5))
                .replicationGuard(new ReplicationGuard(1, Duration.ofSeconds(4), OnShortfall.RELEASE_AND_RETRY)));
        RedisServer master = cluster.masters().get(0);
        String name = nameOn(master, "cut-");
        cluster.replicaOf(master).pause();

        CompletableFuture<Optional<LockHandle>> acquiring = client.lock(name).tryAcquireAsync(Duration.ZERO)
                .toCompletableFuture();
        String[] waiting = new String[1];
        await().atMost(HANG).until(() -> {
            waiting[0] = clientBlockedInWait(master);
            return waiting[0] != null;
        });
        master.execute("CLIENT", "KILL", "ID", waiting[0]);

        assertThat(acquiring).failsWithin(HANG).withThrowableThat()
                .satisfies(e -> assertThat(causes(e)).hasAtLeastOneElementOfType(RedisUnavailableException.class));
        assertThat(client.heldLocks()).isEmpty();
        // the withdraw went over the routed connection
        await().atMost(HANG).until(() -> !has(master, lockKey(name)));
    }

    private static List<Throwable> causes(Throwable error) {
        List<Throwable> chain = new ArrayList<>();
        for (Throwable cause = error; cause != null; cause = cause.getCause()) {
            chain.add(cause);
        }
        return chain;
    }

    /** The id of the connection blocked in WAIT on {@code node}, or null. */
    private static String clientBlockedInWait(RedisServer node) {
        for (String line : node.execute("CLIENT", "LIST").split("\\r?\\n")) {
            if (line.contains(" cmd=wait ")) {
                return line.substring("id=".length(), line.indexOf(' '));
            }
        }
        return null;
    }

    @Test
    void guardedClientsExcludeEachOther() throws Exception {
        ExclusionChecker checker = new ExclusionChecker();
        List<String> names = cluster.masters().stream().map(master -> nameOn(master, "contended-")).toList();
        List<CompletableFuture<Void>> workers = new ArrayList<>();
        for (int c = 0; c < 3; c++) {
            RelockClient client = guarded(OnShortfall.RELEASE_AND_RETRY);
            for (int t = 0; t < 2; t++) {
                workers.add(CompletableFuture.runAsync(() -> {
                    for (int i = 0; i < 30; i++) {
                        String name = names.get(i % names.size());
                        try (LockHandle held = client.lock(name).tryAcquire(HANG).orElseThrow()) {
                            String owner = client.clientId() + Thread.currentThread().getId();
                            checker.enter(name, owner, held.fencingToken());
                            Thread.onSpinWait();
                            checker.leave(name, owner, held.fencingToken());
                        } catch (InterruptedException e) {
                            throw new IllegalStateException(e);
                        }
                    }
                }, runnable -> new Thread(runnable, "guarded-worker").start()));
            }
        }
        CompletableFuture.allOf(workers.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
        ExclusionChecker.Report report = checker.report();
        assertThat(report.entries()).isEqualTo(3 * 2 * 30);
        assertThat(report.overlaps()).as("%s", report.violations()).isZero();
        assertThat(report.tokenRegressions()).isZero();
    }

    @Test
    void redlockRefusesTheGuardNamingWhy() {
        assertThatThrownBy(() -> RelockClient.builder().redlock(cluster.uris().subList(0, 3).toArray(String[]::new))
                        .replicationGuard(1, GUARD_TIMEOUT).build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("does not apply to Redlock")
                .hasMessageContaining("no replicas to wait for");
    }

    @Test
    void anFsyncedGuardIsRefusedAtConnectByAClusterWithoutWaitAof() {
        assumeFalse(ServerFeatures.of(newClient(UnaryOperator.identity())).waitAof(),
                "this redis-server has WAITAOF");
        assertThatThrownBy(() -> newClient(b -> b.replicationGuard(
                        new ReplicationGuard(1, GUARD_TIMEOUT, OnShortfall.FAIL, true))))
                .isInstanceOf(RelockException.class)
                .hasMessageContaining("needs WAITAOF (Redis 7.2 or later)");
    }
}
