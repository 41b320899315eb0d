package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.relock.testredis.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The asynchronous API where it depends on the single-server engine: waits through an outage of the
 * one server (bounded ones fail, unbounded ones retry), and one script call per uncontended
 * acquisition. What every deployment must do asynchronously is {@code contract/AsyncContract}.
 */
@Tag("redis")
class AsyncAcquisitionTest extends OneServerTestBase {

    /** Waits for a stage no longer than {@link #HANG}. */
    private static <T> T result(CompletionStage<T> stage) throws Exception {
        return stage.toCompletableFuture().get(HANG.toMillis(), TimeUnit.MILLISECONDS);
    }

    @Test
    void whileRedisIsDownBoundedWaitsFailAndUnboundedOnesRetry() throws Exception {
        Duration commandTimeout = Duration.ofMillis(500);
        try (RedisServer server = RedisServer.start();
                RelockClient client = RelockClient.builder().redisUri(server.uri())
                        // a short lease: waiters try again (and meet the outage) within a second
                        .defaultLease(Duration.ofSeconds(1))
                        .commandTimeout(commandTimeout).build()) {
            RelockLock lock = client.lock("async-down");
            LockHandle held = lock.acquire();
            // a wait that ends while Redis is down: it tries again until then, and fails with what the last try met
            CompletableFuture<Optional<LockHandle>> bounded =
                    lock.tryAcquireAsync(Duration.ofSeconds(5)).toCompletableFuture();
            CompletableFuture<LockHandle> unbounded = lock.acquireAsync().toCompletableFuture();
            await().atMost(HANG).until(() -> server.execute("ZCARD", queueKey("async-down")).equals("2"));
            server.kill();
            try {
                assertThatThrownBy(() -> bounded.get(HANG.toMillis(), TimeUnit.MILLISECONDS))
                        .isInstanceOf(ExecutionException.class)
                        .hasCauseInstanceOf(RedisUnavailableException.class)
                        .hasMessageContaining("'async-down'");
                await().during(commandTimeout.multipliedBy(3)).atMost(HANG).until(() -> !unbounded.isDone());
            } finally {
                server.restart();
            }
            // the restarted server lost the old hold (no persistence): the retrying waiter gets the lock
            LockHandle taken = unbounded.get(HANG.multipliedBy(2).toMillis(), TimeUnit.MILLISECONDS);
            assertThat(taken.isValid()).isTrue();
            taken.close();
            assertThatThrownBy(held::close).isInstanceOf(LeaseLostException.class);
        }
    }

    @Test
    void anUncontendedAcquisitionIsOneScriptCall() throws Exception {
        RelockLock lock = newClient().lock("async-one-call");
        // the first call of a fresh server may load the script (NOSCRIPT, then EVAL)
        assertThat(lock.tryLock()).isTrue();
        lock.unlock();
        List<Long> calls = new ArrayList<>();
        long before = scriptCalls();
        assertThat(lock.tryLock()).isTrue();
        calls.add(scriptCalls() - before);
        lock.unlock();
        before = scriptCalls();
        assertThat(lock.tryLock(5, TimeUnit.SECONDS)).isTrue();
        calls.add(scriptCalls() - before);
        lock.unlock();
        before = scriptCalls();
        lock.lock();
        calls.add(scriptCalls() - before);
        lock.unlock();
        before = scriptCalls();
        LockHandle handle = result(lock.tryAcquireAsync(Duration.ofSeconds(5))).orElseThrow();
        calls.add(scriptCalls() - before);
        handle.close();
        assertThat(calls).as("script calls of tryLock(), tryLock(wait), lock(), tryAcquireAsync(wait)")
                .containsExactly(1L, 1L, 1L, 1L);
    }
}
