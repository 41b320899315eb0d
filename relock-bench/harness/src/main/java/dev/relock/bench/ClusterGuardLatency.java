package dev.relock.bench;

import dev.relock.RelockClient;
import dev.relock.ReplicationGuard;
import dev.relock.ReplicationGuard.OnShortfall;
import dev.relock.testredis.RedisCluster;
import dev.relock.testredis.RedisServer;
import java.time.Duration;

/**
 * Prints the acquire + release latency of one lock on a local Redis Cluster of three masters with one replica each,
 * without and with the replication guard (one replica, 300 ms, release and retry): p50 and p90 of 300 sequential
 * pairs each, after 50 pairs of warm-up, one client each. The figure docs/sentinel-and-cluster.md quotes for the
 * guard's cost; a measurement, not a benchmark run by {@code run.sh} (see this module's README).
 */
public final class ClusterGuardLatency {

    private static final int WARM_UP = 50;
    private static final int PAIRS = 300;
    private static final ReplicationGuard GUARD =
            new ReplicationGuard(1, Duration.ofMillis(300), OnShortfall.RELEASE_AND_RETRY);

    private ClusterGuardLatency() {
    }

    public static void main(String[] args) {
        try (RedisCluster cluster = RedisCluster.builder().masters(3).replicasPerMaster(1).start();
                RelockClient plain = RelockClient.builder().redisClusterUris(cluster.seedUri()).build();
                RelockClient guarded = RelockClient.builder().redisClusterUris(cluster.seedUri())
                        .replicationGuard(GUARD).build()) {
            String name = nameOn(cluster, cluster.masters().get(0));
            long[] unguarded = LockUnlockPairs.sortedNanos(plain.lock(name), WARM_UP, PAIRS);
            long[] withGuard = LockUnlockPairs.sortedNanos(guarded.lock(name), WARM_UP, PAIRS);
            System.out.printf("acquire+release on the cluster, %d pairs: unguarded p50 %.0f us p90 %.0f us,"
                    + " guarded p50 %.0f us p90 %.0f us%n", PAIRS,
                    LockUnlockPairs.percentileMicros(unguarded, 50), LockUnlockPairs.percentileMicros(unguarded, 90),
                    LockUnlockPairs.percentileMicros(withGuard, 50), LockUnlockPairs.percentileMicros(withGuard, 90));
        }
    }

    /** A lock name whose keys live on {@code master}. */
    private static String nameOn(RedisCluster cluster, RedisServer master) {
        for (int i = 0; ; i++) {
            if (cluster.masterFor("relock:{latency-" + i + "}") == master) {
                return "latency-" + i;
            }
        }
    }
}
