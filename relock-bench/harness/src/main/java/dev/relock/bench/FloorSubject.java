package dev.relock.bench;

import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.StringCodec;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.LockSupport;

/**
 * The raw floor: what the protocol itself costs. {@code SET key token NX PX 30000} to take a lock,
 * a compare-and-delete script to give it up, on one shared Lettuce connection, nothing else: no
 * reentrancy, no renewal, no queue, no fencing. A taken lock is retried every 100 µs, which is
 * fine for S1 and S2 (never contended) and is why the floor is left out of S3.
 */
final class FloorSubject implements Subject {

    static final String COMPARE_AND_DELETE =
            "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end";

    private final String version;

    FloorSubject(String lettuceVersion) {
        this.version = lettuceVersion;
    }

    @Override
    public String label() {
        return "floor (Lettuce " + version + ")";
    }

    @Override
    public String family() {
        return "floor";
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
        String sha = commands.scriptLoad(COMPARE_AND_DELETE);
        SetArgs nxPx = SetArgs.Builder.nx().px(30_000);
        return new Client() {
            @Override
            public Lock lock(String name) {
                return new FloorLock(commands, "bench-floor:" + name, UUID.randomUUID().toString(), sha, nxPx);
            }

            @Override
            public void close() {
                connection.close();
                redis.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            }
        };
    }

    /** One lock object per thread: its token is fixed, so the hot path allocates nothing of ours. */
    private static final class FloorLock implements ScenarioLock {
        private final RedisCommands<String, String> commands;
        private final String key;
        private final String token;
        private final String sha;
        private final SetArgs nxPx;
        private final String[] keys;

        FloorLock(RedisCommands<String, String> commands, String key, String token, String sha, SetArgs nxPx) {
            this.commands = commands;
            this.key = key;
            this.token = token;
            this.sha = sha;
            this.nxPx = nxPx;
            this.keys = new String[] {key};
        }

        @Override
        public void lock() {
            while (!tryLock()) {
                LockSupport.parkNanos(100_000);
            }
        }

        @Override
        public boolean tryLock() {
            return "OK".equals(commands.set(key, token, nxPx));
        }

        @Override
        public void unlock() {
            Long deleted = commands.evalsha(sha, ScriptOutputType.INTEGER, keys, token);
            if (deleted == null || deleted != 1L) {
                throw new IllegalMonitorStateException("floor lock " + key + " was not held by this token");
            }
        }
    }
}
