package dev.relock.bench;

import dev.relock.internal.engine.LockKeys;
import dev.relock.internal.script.LuaScript;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.StringCodec;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.LockSupport;

/**
 * A diagnostic, not a product: relock's own acquire.lua and release.lua sent with exactly relock's
 * keys and arguments, but from a bare Lettuce connection with none of relock's client code. Set
 * against the floor it shows what the scripts cost; set against relock it shows what relock's
 * Java side costs.
 */
final class RelockScriptsSubject implements Subject {

    private static final String PREFIX = "bench-scripts";

    @Override
    public String label() {
        return "relock's scripts on bare Lettuce (diagnostic)";
    }

    @Override
    public String family() {
        return "diagnostic";
    }

    @Override
    public boolean waits() {
        return false;
    }

    @Override
    public boolean renews() {
        return false;
    }

    @Override
    public Client connect(String redisUri, Duration lease) {
        RedisClient redis = RedisClient.create(redisUri);
        StatefulRedisConnection<String, String> connection = redis.connect(StringCodec.UTF8);
        RedisCommands<String, String> commands = connection.sync();
        String acquire = commands.scriptLoad(LuaScript.ACQUIRE.body());
        String release = commands.scriptLoad(LuaScript.RELEASE.body());
        String clientId = UUID.randomUUID().toString().replace("-", "");
        return new Client() {
            private int next;

            @Override
            public synchronized Lock lock(String name) {
                return new ScriptLock(commands, acquire, release, LockKeys.of(PREFIX, name).all(),
                        clientId + ":" + next++);
            }

            @Override
            public void close() {
                connection.close();
                redis.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            }
        };
    }

    private static final class ScriptLock implements Lock {
        private final RedisCommands<String, String> commands;
        private final String acquire;
        private final String release;
        // every lock script takes the same five keys (see queue.lua)
        private final String[] keys;
        private final String owner;
        // the fencing token of the hold taken last, which its release names
        private String token;

        ScriptLock(RedisCommands<String, String> commands, String acquire, String release, String[] keys,
                String owner) {
            this.commands = commands;
            this.acquire = acquire;
            this.release = release;
            this.keys = keys;
            this.owner = owner;
        }

        @Override
        public void lock() {
            while (!tryLock()) {
                LockSupport.parkNanos(100_000);
            }
        }

        @Override
        public boolean tryLock() {
            List<Long> reply = commands.evalsha(acquire, ScriptOutputType.MULTI, keys,
                    owner, "30000", "0", "0", "1000", PREFIX + ":wake:");
            if (reply.get(0) != 1L) {
                return false;
            }
            token = Long.toString(reply.get(1));
            return true;
        }

        @Override
        public void unlock() {
            Long left = commands.evalsha(release, ScriptOutputType.INTEGER, keys,
                    owner, "all", "1000", PREFIX + ":wake:", token);
            if (left == null || left != 0L) {
                throw new IllegalMonitorStateException("not held: " + keys[0]);
            }
        }

        @Override
        public void lockInterruptibly() {
            lock();
        }

        @Override
        public boolean tryLock(long time, TimeUnit unit) {
            throw new UnsupportedOperationException();
        }

        @Override
        public Condition newCondition() {
            throw new UnsupportedOperationException();
        }
    }
}
