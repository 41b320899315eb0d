package dev.relock.internal.single;

import static org.assertj.core.api.Assertions.assertThat;

import dev.relock.internal.engine.HandMovedClock;
import io.lettuce.core.cluster.pubsub.StatefulRedisClusterPubSubConnection;
import io.lettuce.core.cluster.pubsub.api.async.RedisClusterPubSubAsyncCommands;
import io.lettuce.core.event.DefaultEventBus;
import java.lang.reflect.Proxy;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.scheduler.Schedulers;

/**
 * A waiter that joins a shard channel tries again at once exactly when the channel's subscription was confirmed at or
 * after the waiter's last attempt was sent, both read on the client's clock: a release between the two was published
 * to nobody. The pub/sub connection is a stand-in whose SSUBSCRIBE fails (its retry waits on the hand-moved timer);
 * the confirmation is told to the channels as Lettuce would.
 */
class ShardWakeChannelsClockTest {

    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final String CHANNEL = "relock:{confirmed}:wake";

    private final HandMovedClock clock = new HandMovedClock();
    private final ShardWakeChannels channels = new ShardWakeChannels(pubSub(), new DefaultEventBus(
            Schedulers.immediate()), clock, () -> CompletableFuture.completedFuture(null), clock);

    @AfterEach
    void close() {
        channels.close();
    }

    @Test
    void aWaiterTriesAgainWhenTheConfirmationCameAtOrAfterItsAttempt() {
        AtomicInteger woken = new AtomicInteger();
        assertThat(channels.join(CHANNEL, woken::incrementAndGet, clock.nanoTime())).as("the first subscribes")
                .isFalse();
        clock.advance(10 * MS);
        long confirmedAt = clock.nanoTime();
        channels.ssubscribed(null, CHANNEL, 1);
        assertThat(woken).as("the waiter told of the confirmation").hasValue(1);
        clock.advance(10 * MS);

        assertThat(channels.join(CHANNEL, () -> { }, confirmedAt + 1)).as("attempt sent 1 ns after it").isFalse();
        assertThat(channels.join(CHANNEL, () -> { }, confirmedAt)).as("attempt sent with it").isTrue();
        assertThat(channels.join(CHANNEL, () -> { }, confirmedAt - 1)).as("attempt sent 1 ns before it").isTrue();
    }

    /** A cluster pub/sub connection that takes listeners and fails every command. */
    private static StatefulRedisClusterPubSubConnection<String, String> pubSub() {
        ClassLoader loader = ShardWakeChannelsClockTest.class.getClassLoader();
        Object commands = Proxy.newProxyInstance(loader, new Class<?>[] {RedisClusterPubSubAsyncCommands.class},
                (proxy, method, args) -> {
                    throw new IllegalStateException("made up: no connection");
                });
        @SuppressWarnings("unchecked")
        StatefulRedisClusterPubSubConnection<String, String> connection =
                (StatefulRedisClusterPubSubConnection<String, String>) Proxy.newProxyInstance(loader,
                        new Class<?>[] {StatefulRedisClusterPubSubConnection.class}, (proxy, method, args) ->
                                switch (method.getName()) {
                                    case "addListener" -> null;
                                    case "async" -> commands;
                                    default -> throw new UnsupportedOperationException(method.getName());
                                });
        return connection;
    }
}
