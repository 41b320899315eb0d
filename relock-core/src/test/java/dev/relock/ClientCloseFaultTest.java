package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.relock.testredis.RedisServer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Closing a client never strands a thread: waiters fail with IllegalStateException at once, and close() itself
 * returns within a few seconds even when Redis is gone or frozen.
 */
@Tag("redis")
class ClientCloseFaultTest {

    private static final Duration COMMAND_TIMEOUT = Duration.ofMillis(700);
    // close() waits at most a command timeout for its releases plus Lettuce's 2 s shutdown; this catches hangs
    private static final Duration CLOSE_BOUND = COMMAND_TIMEOUT.plusSeconds(5);

    private static RelockClient client(RedisServer server, Duration lease) {
        return RelockClient.builder()
                .redisUri(server.uri())
                .defaultLease(lease)
                .commandTimeout(COMMAND_TIMEOUT)
                .build();
    }

    @Test
    void closeWakesAThreadWaitingInLockWithIllegalStateException() throws Exception {
        try (RedisServer server = RedisServer.start();
                // a long lease: the waiter must be woken by close(), not by the lease running out
                RelockClient holder = client(server, Duration.ofSeconds(30))) {
            RelockClient waiterClient = client(server, Duration.ofSeconds(30));
            try {
                RelockLock held = holder.lock("closing");
                held.lock();
                CompletableFuture<Void> waiting = CompletableFuture.runAsync(() -> waiterClient.lock("closing").lock());
                await().atMost(Duration.ofSeconds(5))
                        .until(() -> "1".equals(server.execute("ZCARD", "relock:{closing}:queue")));

                long start = System.nanoTime();
                waiterClient.close();
                assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(CLOSE_BOUND);
                assertThatThrownBy(() -> waiting.get(5, TimeUnit.SECONDS))
                        .isInstanceOf(ExecutionException.class)
                        .cause()
                        .isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("closed");
                assertThat(held.isHeldByCurrentThread()).as("the holder is not disturbed").isTrue();
                held.unlock();
            } finally {
                waiterClient.close();
            }
        }
    }

    @Test
    void closeReleasesWhatItHolds() throws Exception {
        try (RedisServer server = RedisServer.start()) {
            RelockClient first = client(server, Duration.ofSeconds(30));
            RelockLock lock = first.lock("released-by-close");
            lock.lock();
            lock.lock();
            first.close();
            assertThat(server.execute("EXISTS", "relock:{released-by-close}")).isEqualTo("0");
            assertThatThrownBy(() -> first.lock("released-by-close")).isInstanceOf(IllegalStateException.class);
            assertThatThrownBy(lock::tryLock).isInstanceOf(IllegalStateException.class);
            first.close(); // idempotent
        }
    }

    @Test
    void closeReturnsPromptlyWhileRedisIsDown() throws Exception {
        try (RedisServer server = RedisServer.start()) {
            RelockClient client = client(server, Duration.ofSeconds(30));
            client.lock("held-at-close").lock();
            server.stop();
            long start = System.nanoTime();
            client.close();
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(CLOSE_BOUND);
        }
    }

    @Test
    void closeReturnsPromptlyWhileRedisIsPaused() throws Exception {
        try (RedisServer server = RedisServer.start()) {
            RelockClient client = client(server, Duration.ofSeconds(30));
            client.lock("held-at-close").lock();
            server.pause();
            try {
                long start = System.nanoTime();
                client.close();
                assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(CLOSE_BOUND);
            } finally {
                server.resume();
            }
        }
    }
}
