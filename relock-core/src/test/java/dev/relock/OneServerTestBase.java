package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;

import dev.relock.testredis.RedisServer;
import dev.relock.testredis.TcpProxy;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

/**
 * Base of the behaviour tests: one real redis-server per test class, started by the fixture on a
 * free loopback port (never the Redis of anybody else).
 *
 * <p>What every test gets: {@link #newClient} creates relock clients that are closed after the
 * test; {@link #inNewThread} runs work on a fresh thread (a fresh thread is a fresh lock owner, so
 * nothing is re-entered by accident as it could be on a pooled thread), and such threads must have
 * ended shortly after the clients closed; {@link #admin} is a plain Lettuce connection to look at
 * the keys relock keeps. After each test {@link LeakCheck} holds them to leaving no lock hash (every hold was
 * released or ran out) and no lease keeper thread, and the server is flushed so the next test starts empty.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class OneServerTestBase {

    /** A bound that only a hang exceeds; never a performance goal. */
    static final Duration HANG = Duration.ofSeconds(10);

    RedisServer redis;
    // made by the first scriptCalls()
    private ScriptCount scriptCount;
    private RedisClient adminClient;
    private StatefulRedisConnection<String, String> adminConnection;
    private final LeakCheck leakCheck = new LeakCheck(HANG);

    @BeforeAll
    void startRedis() {
        redis = RedisServer.start();
        adminClient = RedisClient.create(redis.uri());
        adminConnection = adminClient.connect();
    }

    @AfterAll
    void stopRedis() {
        try {
            if (scriptCount != null) {
                scriptCount.close();
            }
            if (adminConnection != null) {
                adminConnection.close();
            }
            if (adminClient != null) {
                adminClient.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            }
        } finally {
            if (redis != null) {
                redis.close();
            }
        }
    }

    @AfterEach
    void closeClientsAndCheckNothingIsLeft() throws InterruptedException {
        // tests here plant keys of their own (queues, grant offers, squatters): only lock hashes are leaks
        leakCheck.closeAndCheck(List.of(redis), LeakCheck.Left.NO_LOCK_HASH);
    }

    /** A client with default settings on this class's server, closed after the test. */
    RelockClient newClient() {
        return newClient(UnaryOperator.identity());
    }

    /** A client on this class's server with extra settings, closed after the test. */
    RelockClient newClient(UnaryOperator<RelockClientBuilder> settings) {
        return leakCheck.closedAfterTest(settings.apply(RelockClient.builder().redisUri(redis.uri())).build());
    }

    /** Synchronous commands on the fixture server, outside relock. */
    RedisCommands<String, String> admin() {
        return adminConnection.sync();
    }

    /** The documented key of a lock's waiter queue: {@code relock:{<name>}:queue} (names without %, { or }). */
    static String queueKey(String name) {
        assertThat(name).as("test lock names need no escaping").doesNotContain("%", "{", "}");
        return "relock:{" + name + "}:queue";
    }

    /**
     * EVALSHA and EVAL calls the fixture server has served so far (INFO commandstats), but the writes of clients'
     * identity records, which clients send in the background ({@link ScriptCount}, counting from the first call of
     * the class on: only differences between calls mean something). Test thread only.
     */
    long scriptCalls() {
        if (scriptCount == null) {
            scriptCount = ScriptCount.of(redis);
        }
        return scriptCount.scriptsSoFar();
    }

    /** The owners waiting for a lock, in queue order. */
    List<String> queue(String name) {
        return admin().zrange(queueKey(name), 0, -1);
    }

    /** Runs {@code work} on a new thread of its own; the test ends only after it ended. */
    <T> CompletableFuture<T> inNewThread(String name, Callable<T> work) {
        return leakCheck.inNewThread(name, work);
    }

    /**
     * A new thread that waits up to {@code wait} for {@code lock} (asserting it gets it), counts {@code acquired} down,
     * waits for {@code mayUnlock}, then reads its fencing token, unlocks and returns the token.
     */
    CompletableFuture<Long> holdingInNewThread(String thread, RelockLock lock, Duration wait,
            CountDownLatch acquired, CountDownLatch mayUnlock) {
        return inNewThread(thread, () -> {
            assertThat(lock.tryLock(wait.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
            acquired.countDown();
            assertThat(mayUnlock.await(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
            // the hold's own token: no round trip
            long token = lock.fencingToken().orElseThrow();
            lock.unlock();
            return token;
        });
    }

    /** Waits for a result of {@link #inNewThread} no longer than {@link #HANG}. */
    static <T> T resultOf(CompletableFuture<T> future) throws Exception {
        return future.get(HANG.toMillis(), TimeUnit.MILLISECONDS);
    }

    static long millisSince(long startNanos) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
    }

    /** A test's body, given a relock client on a caller's Lettuce client that reaches Redis through a proxy. */
    @FunctionalInterface
    interface OnCallersClient {
        void run(TcpProxy proxy, io.lettuce.core.RedisClient callers, RelockClient client) throws Exception;
    }

    /**
     * Runs {@code test} with a relock client made by {@code settings} on a caller's Lettuce client with {@code options}
     * (on {@link ClientOptions#create() Lettuce's defaults} it sends the commands in flight at a reconnect again), whose
     * connections go through a TCP proxy: the proxy's first connection is the relock client's command connection.
     * Closes all three.
     */
    void onCallersClientThroughProxy(ClientOptions options, UnaryOperator<RelockClientBuilder> settings,
            OnCallersClient test) throws Exception {
        try (TcpProxy proxy = TcpProxy.to(redis)) {
            io.lettuce.core.RedisClient callers = io.lettuce.core.RedisClient.create(proxy.uri());
            callers.setOptions(options);
            try (RelockClient client = settings.apply(RelockClient.builder().redisClient(callers)).build()) {
                test.run(proxy, callers, client);
            } finally {
                callers.shutdown();
            }
        }
    }

    /** The attempt id of the grant offer (a writer's or a reader's) queued for {@code name}, or 0 when none. */
    long offeredAttempt(String name) {
        for (var field : admin().hgetall("relock:{" + name + "}:expiry").entrySet()) {
            if (field.getKey().startsWith("~g|")) {
                String offer = field.getValue();
                return Long.parseLong(offer.substring(offer.lastIndexOf(' ') + 1));
            }
        }
        return 0;
    }
}
