package dev.relock.internal.single;

import static org.assertj.core.api.Assertions.assertThat;

import dev.relock.testredis.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The connections of relock's own Lettuce client still offer {@code sync()}, built when first asked for. */
@Tag("redis")
class LazySyncRedisClientTest {

    @Test
    void syncIsBuiltOnFirstUseOnceAndWorks() throws Exception {
        try (RedisServer redis = RedisServer.start()) {
            RedisClient client = LazySyncRedisClient.withLazySync(RedisURI.create(redis.uri()));
            assertThat(client).isInstanceOf(LazySyncRedisClient.class);
            try (StatefulRedisConnection<String, String> connection = client.connect(StringCodec.UTF8);
                    StatefulRedisPubSubConnection<String, String> pubSub = client.connectPubSub(StringCodec.UTF8)) {
                // from several threads at once: all get the same proxy
                CountDownLatch start = new CountDownLatch(1);
                CompletableFuture<?>[] callers = new CompletableFuture<?>[4];
                for (int i = 0; i < callers.length; i++) {
                    callers[i] = CompletableFuture.supplyAsync(() -> {
                        await(start);
                        return connection.sync();
                    });
                }
                start.countDown();
                CompletableFuture.allOf(callers).get(10, TimeUnit.SECONDS);
                for (CompletableFuture<?> caller : callers) {
                    assertThat(caller.join()).isSameAs(connection.sync());
                }
                connection.sync().set("lazy-sync", "v");
                assertThat(connection.sync().get("lazy-sync")).isEqualTo("v");
                assertThat(connection.async().get("lazy-sync").get(10, TimeUnit.SECONDS)).isEqualTo("v");

                assertThat(pubSub.sync()).isSameAs(pubSub.sync());
                pubSub.sync().subscribe("lazy-sync-channel");
                assertThat(connection.sync().pubsubNumsub("lazy-sync-channel")).containsEntry("lazy-sync-channel", 1L);
            } finally {
                client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            }
        }
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
