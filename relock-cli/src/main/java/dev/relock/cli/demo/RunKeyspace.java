package dev.relock.cli.demo;

import dev.relock.RedisUnavailableException;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HexFormat;

/**
 * The keys of one run of the engine, on the parent's own connection: the run's unique prefix, the
 * counters it resets and reads, and the clean-up that deletes every key under the prefix (found by
 * SCAN, never KEYS; never FLUSH). Keys of anybody else are never touched.
 *
 * <p>Not thread-safe, except {@link #deleteAll()}, which a shutdown hook may call while the run's
 * thread is still busy (Lettuce connections may be shared between threads).
 */
final class RunKeyspace implements AutoCloseable {

    private static final Duration TIMEOUT = Duration.ofSeconds(3);
    private static final SecureRandom RANDOM = new SecureRandom();

    private final String uri;
    private final String prefix;
    private final RedisClient client;
    private final StatefulRedisConnection<String, String> connection;
    private final RedisCommands<String, String> redis;

    private RunKeyspace(String uri, String prefix, RedisClient client,
            StatefulRedisConnection<String, String> connection) {
        this.uri = uri;
        this.prefix = prefix;
        this.client = client;
        this.connection = connection;
        this.redis = connection.sync();
    }

    /**
     * Connects to {@code uri} and picks a fresh prefix {@code <basePrefix>:<kind>-<random>}.
     *
     * @throws RedisUnavailableException naming the address (never the password) if Redis does not
     *     answer or refuses the login
     */
    static RunKeyspace open(String uri, String basePrefix, String kind) {
        RedisURI redisUri = RedisAddress.parse(uri);
        redisUri.setTimeout(TIMEOUT);
        RedisClient client = RedisClient.create(redisUri);
        client.setOptions(ClientOptions.builder()
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .timeoutOptions(TimeoutOptions.enabled(TIMEOUT))
                .socketOptions(SocketOptions.builder().connectTimeout(TIMEOUT).build())
                .build());
        try {
            StatefulRedisConnection<String, String> connection = client.connect();
            connection.sync().ping();
            byte[] random = new byte[4];
            RANDOM.nextBytes(random);
            return new RunKeyspace(uri, basePrefix + ":" + kind + "-" + HexFormat.of().formatHex(random), client, connection);
        } catch (RuntimeException e) {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(1));
            throw unavailable(uri, e);
        }
    }

    /** A one-line RedisUnavailableException for a failure to talk to {@code uri}. */
    static RedisUnavailableException unavailable(String uri, RuntimeException e) {
        if (e instanceof RedisUnavailableException already) {
            return already;
        }
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String reason = e instanceof RedisCommandTimeoutException ? "no answer within " + TIMEOUT.toSeconds() + " s"
                : root.getMessage() != null ? WorkerProtocol.oneLine(root.getMessage()) : root.getClass().getSimpleName();
        String verb = e instanceof RedisConnectionException ? "cannot connect to" : "cannot use";
        return new RedisUnavailableException(verb + " Redis at " + RedisAddress.display(uri) + ": " + reason, e);
    }

    /** The prefix of every key of this run: {@code <base>:<kind>-<8 hex digits>}. */
    String prefix() {
        return prefix;
    }

    /** Sets every counter to 0 and forgets the last fencing tokens. */
    void reset(int locks) {
        try {
            for (int lock = 0; lock < locks; lock++) {
                redis.setex(WorkerProtocol.counterKey(prefix, lock), WorkerProtocol.KEY_TTL_SECONDS, "0");
                redis.del(WorkerProtocol.lastTokenKey(prefix, lock));
            }
        } catch (RedisException e) {
            throw unavailable(uri, e);
        }
    }

    /** The sum of the counters: how many increments Redis kept. */
    long countersTotal(int locks) {
        long total = 0;
        try {
            for (int lock = 0; lock < locks; lock++) {
                String value = redis.get(WorkerProtocol.counterKey(prefix, lock));
                total += value == null ? 0 : Long.parseLong(value);
            }
        } catch (RedisException e) {
            throw unavailable(uri, e);
        }
        return total;
    }

    /** Deletes every key under this run's prefix (the locks' keys included); returns how many. */
    long deleteAll() {
        ScanArgs match = ScanArgs.Builder.matches(globEscaped(prefix) + ":*").limit(1000);
        long deleted = 0;
        ScanCursor cursor = ScanCursor.INITIAL;
        try {
            do {
                KeyScanCursor<String> page = redis.scan(cursor, match);
                if (!page.getKeys().isEmpty()) {
                    deleted += redis.del(page.getKeys().toArray(String[]::new));
                }
                cursor = page;
            } while (!cursor.isFinished());
        } catch (RedisException e) {
            throw unavailable(uri, e);
        }
        return deleted;
    }

    /** {@code text} with Redis glob characters escaped, so it only matches itself. */
    static String globEscaped(String text) {
        StringBuilder out = new StringBuilder(text.length());
        for (char c : text.toCharArray()) {
            if ("*?[]\\".indexOf(c) >= 0) {
                out.append('\\');
            }
            out.append(c);
        }
        return out.toString();
    }

    @Override
    public void close() {
        try {
            connection.close();
        } finally {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(1));
        }
    }
}
