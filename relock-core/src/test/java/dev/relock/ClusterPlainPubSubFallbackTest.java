package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

import dev.relock.internal.single.ServerFeatures;
import dev.relock.testredis.RedisBinary;
import dev.relock.testredis.RedisCluster;
import dev.relock.testredis.RedisServer;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A Redis Cluster whose servers have no sharded pub/sub (the fixture's embedded Redis 6.2): the client
 * finds out at connect and keeps plain pub/sub, one subscription to its own channel, which a release on
 * any node reaches.
 */
@Tag("redis")
class ClusterPlainPubSubFallbackTest {

    private static final Duration HANG = RedisClusterTest.HANG;

    @Test
    void clusterWithoutSpublishWakesWaitersThroughTheirClientsOwnChannel() throws Exception {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "");
        assumeThat(os.contains("linux") && (arch.equals("amd64") || arch.equals("x86_64")))
                .as("the embedded Redis 6.2 runs on Linux x86-64 only").isTrue();
        try (RedisCluster cluster = RedisCluster.builder().binary(RedisBinary.embedded()).masters(3).start();
                RelockClient holder = RelockClient.builder().redisClusterUris(cluster.seedUri()).build();
                RelockClient waiter = RelockClient.builder().redisClusterUris(cluster.seedUri()).build()) {
            assertThat(ServerFeatures.of(waiter).shardedPubSub()).as("Redis 6.2").isFalse();
            String channel = "relock:wake:" + waiter.clientId();
            RedisServer subscribedOn = cluster.nodes().stream()
                    .filter(node -> node.execute("PUBSUB", "CHANNELS", channel).contains(channel))
                    .findFirst().orElseThrow(() -> new AssertionError("no node has a subscriber on " + channel));
            // a lock on another node than the subscription: the plain PUBLISH crosses the cluster bus
            String name = null;
            for (int i = 0; name == null; i++) {
                if (cluster.masterFor("relock:{old-" + i + "}") != subscribedOn) {
                    name = "old-" + i;
                }
            }
            String lock = name;
            LockHandle held = holder.lock(lock).acquire(); // 30 s lease: only a wake-up ends the wait soon
            CompletableFuture<LockHandle> waited = waiter.lock(lock).acquireAsync().toCompletableFuture();
            await().atMost(HANG).until(() -> holder.inspect(lock).waiters() == 1);
            long released = System.nanoTime();
            held.close();
            waited.get(HANG.toMillis(), TimeUnit.MILLISECONDS).close();
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - released)).isLessThan(3_000);
        }
    }
}
