package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.relock.fencing.RedisFence;
import dev.relock.fencing.StaleFencingTokenException;
import dev.relock.testredis.RedisServer;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * {@link RedisFence} on a one-node Redis Cluster that serves every slot. Cluster mode refuses a
 * script whose keys are in different slots (CROSSSLOT), so a write going through proves that the
 * token key shares the resource's slot, for keys with and without a hash tag.
 */
@Tag("redis")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RedisFenceClusterTest {

    private static final Duration HANG = Duration.ofSeconds(10);

    private RedisServer node;
    private RedisClusterClient client;
    private StatefulRedisClusterConnection<String, String> connection;

    @BeforeAll
    void startCluster() {
        node = RedisServer.builder().config("cluster-enabled", "yes").start();
        node.execute(IntStream.concat(IntStream.of(-2, -1), IntStream.range(0, 16384))
                .mapToObj(slot -> slot == -2 ? "CLUSTER" : slot == -1 ? "ADDSLOTS" : Integer.toString(slot))
                .toArray(String[]::new));
        await().atMost(HANG).until(() -> node.execute("CLUSTER", "INFO").contains("cluster_state:ok"));
        client = RedisClusterClient.create(node.uri());
        connection = client.connect();
    }

    @AfterAll
    void stopCluster() {
        try {
            if (connection != null) {
                connection.close();
            }
            if (client != null) {
                client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            }
        } finally {
            if (node != null) {
                node.close();
            }
        }
    }

    @Test
    void writesAndRefusesInOneSlotForKeysWithAndWithoutAHashTag() throws Exception {
        RedisFence fence = RedisFence.on(connection);
        for (String key : new String[] {"account:42", "balance:{account:42}", "a{b"}) {
            assertThat(fence.trySet(key, "100", 7)).as(key).isTrue();
            assertThatThrownBy(() -> fence.set(key, "50", 6)).isInstanceOf(StaleFencingTokenException.class);
            assertThat(fence.trySetAsync(key, "110", 8).toCompletableFuture().get(HANG.toMillis(), TimeUnit.MILLISECONDS))
                    .isTrue();
            assertThat(connection.sync().get(key)).isEqualTo("110");
        }
    }

    @Test
    void clusterModeWouldRefuseKeysInTwoSlots() {
        // the check the test above relies on: the same script with a token key in another slot fails
        assertThatThrownBy(() -> connection.sync().eval("return redis.call('SET', KEYS[2], '1')",
                ScriptOutputType.STATUS, "account:42", "account:42:fencing-token"))
                .isInstanceOf(RedisCommandExecutionException.class)
                .hasMessageContaining("CROSSSLOT");
    }
}
