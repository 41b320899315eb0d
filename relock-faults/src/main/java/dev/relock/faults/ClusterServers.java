package dev.relock.faults;

import dev.relock.testredis.RedisCluster;
import dev.relock.testredis.RedisServer;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A Redis Cluster of three masters with one replica each; every worker is given every node as a seed
 * ({@code cluster:} URIs), with or without the replication guard. Its faults move the one slot the campaign's lock
 * lives in: a planned failover of the shard that serves it, its master killed, or a migration of the slot to another
 * master. Each returns only once every node agrees on the new owner and reports {@code cluster_state:ok} (the
 * fixture's promise), so the next injection starts from a healthy cluster; the slot's master always has a replica to
 * fail over to.
 */
final class ClusterServers extends LockServers {

    /**
     * The slot of the lock's keys: they all carry the hash tag of the lock's name ({@code relock:{campaign}},
     * {@code relock:{campaign}:fence}, …; see relock-core's LockKeys), so they share it, the wake-up channel too.
     */
    static final int LOCK_SLOT = RedisCluster.slot("relock:{" + FaultWorker.LOCK + "}");

    /** The longest a {@link #migrateTheLocksSlot} keeps the slot MIGRATING before it moves its keys. */
    static final int MIGRATING_MILLIS = 1_000;

    private final RedisCluster cluster;
    private final String guard;

    private ClusterServers(String guard) {
        this.cluster = RedisCluster.builder().masters(3).replicasPerMaster(1).start();
        this.guard = guard;
    }

    static ClusterServers threeShards() {
        return new ClusterServers("");
    }

    /** Acquisitions are handed out only once the replica of the slot's master has them ({@link SentinelServers#GUARD}). */
    static ClusterServers threeShardsGuarded() {
        return new ClusterServers(SentinelServers.GUARD);
    }

    @Override
    String guard() {
        return guard;
    }

    @Override
    String lockSpec(String workerId) {
        return "cluster:" + String.join(",", cluster.uris());
    }

    @Override
    String describe() {
        return "a Redis Cluster of three masters with one replica each"
                + (guard.isEmpty() ? "" : "; replication guard of 1 replica, " + guard.split(":")[1] + " ms");
    }

    /**
     * CLUSTER FAILOVER on the replica of the master serving the lock's slot: a coordinated failover (the master
     * pauses its writers until the replica has caught up), awaited until every node names the replica as the
     * slot's master and the former master replicates from it.
     */
    String failoverTheLocksShard(Campaign.Run run) {
        long started = System.nanoTime();
        RedisServer master = cluster.masterForSlot(LOCK_SLOT);
        RedisServer promoted = cluster.failover(cluster.replicaOf(master));
        return "slot " + LOCK_SLOT + ": master " + master.port() + " -> " + promoted.port() + " in "
                + millisSince(started) + " ms";
    }

    /**
     * kill -9 of the master serving the lock's slot; once every node names its promoted replica (after
     * {@code cluster-node-timeout} and an election: 2 to 4 s), the killed node is restarted with its data and
     * {@code nodes.conf}, finds its slots taken and turns into the promoted node's replica, in sync before this
     * returns. Replication is asynchronous: a hold the replica had not received when its master died is gone.
     */
    String killTheLocksMaster(Campaign.Run run) {
        long started = System.nanoTime();
        RedisServer master = cluster.masterForSlot(LOCK_SLOT);
        RedisServer promoted = cluster.killMaster(master);
        long promotedMillis = millisSince(started);
        master.restart();
        cluster.awaitHealthy();
        return "slot " + LOCK_SLOT + ": master " + master.port() + " killed, " + promoted.port() + " promoted in "
                + promotedMillis + " ms, " + master.port() + " its replica in " + millisSince(started) + " ms";
    }

    /**
     * Moves the lock's slot with its keys to another master, picked by the run's random, while the workers use it,
     * as a resharding does: the slot is marked MIGRATING on its master and IMPORTING on the target and stays so for
     * 0 to {@value #MIGRATING_MILLIS} ms (resharding moves a slot's keys in batches, which take time), then its keys
     * are moved with MIGRATE and every master is told the target serves it. Meanwhile a script whose keys are all
     * still on the source runs there, one whose keys are split answers TRYAGAIN (relock's scripts take all five keys
     * of the lock, its fencing counter among them, kept 24 h: while the slot is MIGRATING, most of them are answered
     * so), one whose keys have all moved is sent to the target with ASK; once done, clients get MOVED.
     */
    String migrateTheLocksSlot(Campaign.Run run) throws InterruptedException {
        long started = System.nanoTime();
        RedisServer source = cluster.masterForSlot(LOCK_SLOT);
        List<RedisServer> targets = cluster.masters().stream().filter(master -> master != source).toList();
        RedisServer target = targets.get(run.random().nextInt(targets.size()));
        long migratingMillis = run.random().nextInt(MIGRATING_MILLIS + 1);
        cluster.beginSlotMigration(LOCK_SLOT, target);
        Thread.sleep(migratingMillis); // the fault: the slot half-way between two masters for this long
        cluster.finishSlotMigration(LOCK_SLOT, target);
        return "slot " + LOCK_SLOT + ": " + source.port() + " -> " + target.port() + ", migrating for "
                + migratingMillis + " ms, done in " + millisSince(started) + " ms";
    }

    private static long millisSince(long startNanos) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
    }

    @Override
    public void close() {
        cluster.close();
    }
}
