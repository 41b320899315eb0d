package dev.relock.internal.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.relock.RedisUnavailableException;
import dev.relock.internal.engine.LockKeys;
import dev.relock.internal.script.SingleServerScripts;
import dev.relock.testredis.RedisCluster;
import dev.relock.testredis.RedisServer;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.models.partitions.Partitions;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.resource.ClientResources;
import io.netty.util.HashedWheelTimer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The EVALSHA of a {@link RedisCalls#run} is a command relock hands Lettuce itself: what Lettuce hangs on it (the
 * command's timeout) is let go when the reply comes, by EVALSHA or by the EVAL that follows NOSCRIPT; a call
 * Lettuce times out, or cancels as its connection closes, fails as Redis unavailable; a call its caller gave up on
 * still runs.
 */
@Tag("redis")
class RedisCallsTest {

    private static final String OWNER = "calls-test-client:1";
    private static final String WAKE_ROUTE = "calls-test:wake:";

    @Test
    void aRepliedCallLetsGoOfLettucesTimeoutByEvalshaAndByEvalAfterNoscript() throws Exception {
        HashedWheelTimer wheel = new HashedWheelTimer(10, TimeUnit.MILLISECONDS);
        ClientResources resources = ClientResources.builder().timer(wheel).build();
        try (RedisServer redis = RedisServer.start()) {
            RedisClient client = RedisClient.create(resources, redis.uri());
            // an hour: a timeout the call does not cancel stays pending on the wheel for the whole test
            client.setOptions(ClientOptions.builder()
                    .timeoutOptions(TimeoutOptions.enabled(Duration.ofHours(1))).build());
            try (StatefulRedisConnection<String, String> connection = client.connect(Utf8Codec.INSTANCE)) {
                RedisCalls calls = new RedisCalls(connection, connection.async(), Duration.ofSeconds(30), redis.uri(),
                        resources.eventExecutorGroup(), true, System::nanoTime);
                String[] keys = LockKeys.of("calls-test", "calls:test").all();

                for (int i = 0; i < 500; i++) {
                    lockAndUnlock(calls, keys);
                }
                await().atMost(Duration.ofSeconds(20)).until(() -> wheel.pendingTimeouts() < 10);

                // every EVALSHA now answers NOSCRIPT; the call runs the script by EVAL and replies with its outcome
                connection.sync().scriptFlush();
                lockAndUnlock(calls, keys);
                connection.sync().scriptFlush();
                lockAndUnlock(calls, keys);
                await().atMost(Duration.ofSeconds(20)).until(() -> wheel.pendingTimeouts() < 10);
            } finally {
                client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            }
        } finally {
            resources.shutdown(0, 2, TimeUnit.SECONDS);
            // Lettuce stops no timer it was given
            wheel.stop();
        }
    }

    @Test
    void aCallLettuceTimesOutFailsAndTheCallerLearnsThatRedisDidNotAnswer() throws Exception {
        try (RedisServer redis = RedisServer.start()) {
            RedisClient client = RedisClient.create(redis.uri());
            client.setOptions(ClientOptions.builder()
                    .timeoutOptions(TimeoutOptions.enabled(Duration.ofMillis(300))).build());
            RedisClient pausing = RedisClient.create(redis.uri());
            try (StatefulRedisConnection<String, String> connection = client.connect(Utf8Codec.INSTANCE);
                    StatefulRedisConnection<String, String> pauser = pausing.connect(Utf8Codec.INSTANCE)) {
                RedisCalls calls = new RedisCalls(connection, connection.async(), Duration.ofSeconds(30), redis.uri(),
                        client.getResources().eventExecutorGroup(), true, System::nanoTime);
                String[] keys = LockKeys.of("calls-test", "calls:paused").all();
                // Redis runs no client's command for 3 s: Lettuce's 300 ms pass first
                pauser.sync().clientPause(3_000);
                CompletableFuture<List<Long>> reply = calls.run(SingleServerScripts.ACQUIRE, ScriptOutputType.MULTI,
                        keys, OWNER, "30000", "0", "0", "1000", WAKE_ROUTE);

                assertThatThrownBy(() -> calls.await(reply, "acquire", "calls:paused"))
                        .isInstanceOf(RedisUnavailableException.class)
                        .hasMessageContaining("did not answer");
                assertThat(reply).isCompletedExceptionally();
            } finally {
                client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
                pausing.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            }
        }
    }

    @Test
    void aCallLettuceCancelsAsItsConnectionClosesFailsAsRedisUnavailableOurOwnAndLettucesCommandsAlike()
            throws Exception {
        try (RedisServer redis = RedisServer.start()) {
            RedisClient client = RedisClient.create(redis.uri());
            try {
                StatefulRedisConnection<String, String> connection = client.connect(Utf8Codec.INSTANCE);
                RedisCalls calls = new RedisCalls(connection, connection.async(), Duration.ofSeconds(30), redis.uri(),
                        client.getResources().eventExecutorGroup(), true, System::nanoTime);
                String[] keys = LockKeys.of("calls-test", "calls:cancelled").all();
                // the server is gone: Lettuce keeps what it is given for after its reconnect, and cancels it when the
                // connection is closed first; one command relock hands Lettuce itself, one of Lettuce's own API
                redis.stop();
                await().atMost(Duration.ofSeconds(20)).until(() -> !connection.isOpen());
                CompletableFuture<List<Long>> script = calls.run(SingleServerScripts.ACQUIRE, ScriptOutputType.MULTI,
                        keys, OWNER, "30000", "0", "0", "1000", WAKE_ROUTE);
                CompletableFuture<String> ping = connection.async().ping().toCompletableFuture();
                connection.close();

                assertThatThrownBy(() -> calls.await(script, "acquire", "calls:cancelled"))
                        .isInstanceOf(RedisUnavailableException.class)
                        .hasMessageContaining("acquire of lock 'calls:cancelled'")
                        .hasMessageContaining("closed with the command unanswered");
                assertThatThrownBy(() -> calls.await(ping, "ping", null))
                        .isInstanceOf(RedisUnavailableException.class)
                        .hasMessageContaining("closed with the command unanswered");
            } finally {
                client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            }
        }
    }

    @Test
    void aCallGivenUpStillRunsAsAnyCommandLettuceWasGiven() throws Exception {
        try (RedisServer redis = RedisServer.start()) {
            RedisClient client = RedisClient.create(redis.uri());
            try (StatefulRedisConnection<String, String> connection = client.connect(Utf8Codec.INSTANCE)) {
                RedisCalls calls = new RedisCalls(connection, connection.async(), Duration.ofSeconds(30), redis.uri(),
                        client.getResources().eventExecutorGroup(), true, System::nanoTime);
                // given up at once, most before the I/O thread writes them: what relock sends after giving up on a
                // reply (a withdraw, a release again) assumes the command may have run, and a release given up on
                // still reaches Redis. (Given up, a call sends no EVAL after NOSCRIPT: the script is cached first.)
                connection.sync().scriptLoad(SingleServerScripts.ACQUIRE.body());
                String[] locks = new String[50];
                for (int i = 0; i < locks.length; i++) {
                    String[] keys = LockKeys.of("calls-test", "calls:given-up-" + i).all();
                    locks[i] = keys[0];
                    calls.abandon(calls.run(SingleServerScripts.ACQUIRE, ScriptOutputType.MULTI, keys,
                            OWNER, "30000", "0", "0", "1000", WAKE_ROUTE));
                }
                await().atMost(Duration.ofSeconds(20)).until(() -> connection.sync().exists(locks) == locks.length);
            } finally {
                client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            }
        }
    }

    @Test
    void aCallLettuceDidNotSendForWantOfAMasterOfItsSlotIsSentOnceTheTopologyNamesOne() throws Exception {
        try (RedisCluster cluster = RedisCluster.builder().masters(1).start()) {
            RedisClusterClient client = RedisClusterClient.create(cluster.seedUri());
            // as relock's own clients: an uncovered slot asks for a fresh topology
            client.setOptions(ClusterClientOptions.builder()
                    .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
                            .enableAllAdaptiveRefreshTriggers().build())
                    .build());
            String[] keys = LockKeys.of("calls-test", "calls:uncovered").all();
            int slot = SlotHash.getSlot(keys[0]);
            // a view read amid a failover, from a node that has not heard of the promotion yet: no master of the slot
            Partitions partitions = client.getPartitions();
            RedisClusterNode master = partitions.getPartitionBySlot(slot);
            List<Integer> slots = new ArrayList<>(master.getSlots());
            slots.remove(Integer.valueOf(slot));
            master.setSlots(slots);
            partitions.updateCache();
            assertThat(client.getPartitions().getPartitionBySlot(slot)).isNull();
            try (StatefulRedisClusterConnection<String, String> connection = client.connect(Utf8Codec.INSTANCE)) {
                RedisCalls calls = new RedisCalls(connection, connection.async(), Duration.ofSeconds(10),
                        cluster.seedUri(), client.getResources().eventExecutorGroup(), false, System::nanoTime);

                // Lettuce fails the first EVALSHA unsent (PartitionSelectorException); the call sends it again
                // once the topology it asked for names the master
                lockAndUnlock(calls, keys);
                assertThat(client.getPartitions().getPartitionBySlot(slot)).isNotNull();
            } finally {
                client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            }
        }
    }

    private static void lockAndUnlock(RedisCalls calls, String[] keys) {
        List<Long> taken = calls.await(calls.run(SingleServerScripts.ACQUIRE, ScriptOutputType.MULTI, keys,
                OWNER, "30000", "0", "0", "1000", WAKE_ROUTE), "acquire", "calls:test");
        assertThat(taken.get(0)).isEqualTo(1L);
        Long holdsLeft = calls.await(calls.run(SingleServerScripts.RELEASE, ScriptOutputType.INTEGER, keys,
                OWNER, "all", "1000", WAKE_ROUTE, Long.toString(taken.get(1))), "release", "calls:test");
        assertThat(holdsLeft).isZero();
    }
}
