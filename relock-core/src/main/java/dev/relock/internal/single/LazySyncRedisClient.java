package dev.relock.internal.single;

import io.lettuce.core.RedisChannelWriter;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.StatefulRedisConnectionImpl;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.json.JsonParser;
import io.lettuce.core.protocol.PushHandler;
import io.lettuce.core.pubsub.PubSubEndpoint;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnectionImpl;
import io.lettuce.core.pubsub.api.sync.RedisPubSubCommands;
import java.time.Duration;
import java.util.function.Supplier;

/**
 * The {@link RedisClient} relock creates for itself: its connections build their synchronous API
 * ({@code sync()}) on first use instead of when they connect.
 *
 * <p>Why: Lettuce's synchronous API is a {@link java.lang.reflect.Proxy} of an interface with
 * several hundred methods, generated per connection type when the first such connection is made.
 * relock talks to Redis only through {@code async()}, so the two generations at connect (command
 * and pub/sub connection) were pure cost, a large share of a short {@code relock exec}'s run time
 * (relock-bench's S6 measures it). A caller's own {@link RedisClient} is used as it is.
 *
 * <p>Thread safety: {@code sync()} may be called from any thread; the first caller builds the
 * proxy under a lock of the connection's own, later callers read the volatile field.
 */
final class LazySyncRedisClient extends RedisClient {

    private LazySyncRedisClient(RedisURI uri) {
        super(null, uri); // null: the client creates and owns its resources, as RedisClient.create(uri) does
    }

    /**
     * A client for {@code uri}: this one, or Lettuce's own if the Lettuce on the class path lacks
     * the protected constructors and factory methods this class builds on (they are not Lettuce's
     * public API, and 6.8 is the version relock is built and tested with). A class that fails to
     * link fails where it is first used, so the caller's frame, not this class, catches that.
     */
    static RedisClient withLazySync(RedisURI uri) {
        return new LazySyncRedisClient(uri);
    }

    @Override
    protected <K, V> StatefulRedisConnectionImpl<K, V> newStatefulRedisConnection(RedisChannelWriter channelWriter,
            PushHandler pushHandler, RedisCodec<K, V> codec, Duration timeout) {
        try {
            return new CommandConnection<>(channelWriter, pushHandler, codec, timeout, getOptions().getJsonParser());
        } catch (LinkageError e) {
            return super.newStatefulRedisConnection(channelWriter, pushHandler, codec, timeout);
        }
    }

    @Override
    protected <K, V> StatefulRedisPubSubConnectionImpl<K, V> newStatefulRedisPubSubConnection(
            PubSubEndpoint<K, V> endpoint, RedisChannelWriter channelWriter, RedisCodec<K, V> codec, Duration timeout) {
        try {
            return new PubSubConnection<>(endpoint, channelWriter, codec, timeout);
        } catch (LinkageError e) {
            return super.newStatefulRedisPubSubConnection(endpoint, channelWriter, codec, timeout);
        }
    }

    private static final class CommandConnection<K, V> extends StatefulRedisConnectionImpl<K, V> {

        private final OnFirstUse<RedisCommands<K, V>> lazySync = new OnFirstUse<>(super::newRedisSyncCommandsImpl);

        CommandConnection(RedisChannelWriter writer, PushHandler pushHandler, RedisCodec<K, V> codec,
                Duration timeout, Supplier<JsonParser> parser) {
            super(writer, pushHandler, codec, timeout, parser);
        }

        @Override
        protected RedisCommands<K, V> newRedisSyncCommandsImpl() {
            return null; // called by the super constructor; built by sync() when first asked for
        }

        @Override
        public RedisCommands<K, V> sync() {
            return lazySync.get();
        }
    }

    private static final class PubSubConnection<K, V> extends StatefulRedisPubSubConnectionImpl<K, V> {

        private final OnFirstUse<RedisPubSubCommands<K, V>> lazySync =
                new OnFirstUse<>(super::newRedisSyncCommandsImpl);

        PubSubConnection(PubSubEndpoint<K, V> endpoint, RedisChannelWriter writer, RedisCodec<K, V> codec,
                Duration timeout) {
            super(endpoint, writer, codec, timeout);
        }

        @Override
        protected RedisPubSubCommands<K, V> newRedisSyncCommandsImpl() {
            return null; // called by the super constructor; built by sync() when first asked for
        }

        @Override
        public RedisPubSubCommands<K, V> sync() {
            return lazySync.get();
        }
    }

    /** A value made by {@code make} when first asked for, once, whichever threads ask. */
    private static final class OnFirstUse<T> {

        private final Supplier<T> make;
        private volatile T value;

        OnFirstUse(Supplier<T> make) {
            this.make = make;
        }

        T get() {
            T made = value;
            if (made == null) {
                synchronized (this) {
                    made = value;
                    if (made == null) {
                        made = make.get();
                        value = made;
                    }
                }
            }
            return made;
        }
    }
}
