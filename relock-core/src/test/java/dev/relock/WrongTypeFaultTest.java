package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.relock.testredis.RedisServer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A key of another type where a lock's key should be: every operation fails at once with a {@link RelockException}
 * that names the lock and says WRONGTYPE; nothing retries it forever (not even {@code lock()}, which retries only
 * unavailability), and the foreign key is left exactly as it was.
 */
@Tag("redis")
class WrongTypeFaultTest {

    private static final Duration COMMAND_TIMEOUT = Duration.ofMillis(800);
    // lock() must give up on WRONGTYPE rather than retry it; this bound only catches a retry loop
    private static final Duration NO_HANG = COMMAND_TIMEOUT.plusSeconds(4);

    private static RelockClient client(RedisServer server) {
        return RelockClient.builder().redisUri(server.uri()).commandTimeout(COMMAND_TIMEOUT).build();
    }

    @Test
    void aStringAtTheLockKeyFailsEveryAcquireAndIsLeftUntouched() throws Exception {
        try (RedisServer server = RedisServer.start(); RelockClient client = client(server)) {
            server.execute("SET", "relock:{wrong-type}", "not a lock");
            RelockLock lock = client.lock("wrong-type");

            assertWrongType("wrong-type", lock::tryLock);
            assertWrongType("wrong-type", () -> lock.tryLock(1, TimeUnit.SECONDS));
            assertWrongType("wrong-type", () -> lock.tryLock(1, 5, TimeUnit.SECONDS));
            assertWrongType("wrong-type", () -> lock.tryAcquire(Duration.ofSeconds(1)));
            assertWrongType("wrong-type", lock::forceUnlock);
            assertWrongTypeWithoutHanging(client, RelockLock::lock);
            assertWrongTypeWithoutHanging(client, RelockLock::acquire);
            assertWrongTypeWithoutHanging(client, RelockLock::lockInterruptibly);
            assertWrongTypeWithoutHanging(client, l -> l.lock(5, TimeUnit.SECONDS));

            assertThat(server.execute("GET", "relock:{wrong-type}")).isEqualTo("not a lock");
            assertThat(server.execute("TYPE", "relock:{wrong-type}")).isEqualTo("string");
            assertThat(server.execute("PTTL", "relock:{wrong-type}")).as("no expiry set").isEqualTo("-1");
            assertThat(lock.isHeldByCurrentThread()).isFalse();
            assertThat(lock.getHoldCount()).isZero();
            assertThat(server.execute("EXISTS", "relock:{wrong-type}:queue")).as("nobody queued").isEqualTo("0");

            // other locks of the client are not affected
            RelockLock fine = client.lock("right-type");
            assertThat(fine.tryLock()).isTrue();
            fine.unlock();
        }
    }

    @Test
    void aForeignFenceOrQueueKeyFailsTheAcquireBeforeAnythingIsWritten() throws Exception {
        try (RedisServer server = RedisServer.start(); RelockClient client = client(server)) {
            server.execute("HSET", "relock:{bad-fence}:fence", "field", "value");
            server.execute("SET", "relock:{bad-queue}:queue", "not a queue");

            assertWrongType("bad-fence", client.lock("bad-fence")::tryLock);
            assertWrongType("bad-queue", () -> client.lock("bad-queue").tryLock(1, TimeUnit.SECONDS));

            assertThat(server.execute("EXISTS", "relock:{bad-fence}")).as("no lock left behind").isEqualTo("0");
            assertThat(server.execute("EXISTS", "relock:{bad-queue}")).as("no lock left behind").isEqualTo("0");
            assertThat(server.execute("HGETALL", "relock:{bad-fence}:fence")).isEqualTo("[field, value]");
            assertThat(server.execute("GET", "relock:{bad-queue}:queue")).isEqualTo("not a queue");
        }
    }

    @Test
    void aHeldLockReplacedByAStringIsReportedLostAndTheStringIsLeftUntouched() throws Exception {
        List<LeaseLost> lost = new CopyOnWriteArrayList<>();
        try (RedisServer server = RedisServer.start();
                RelockClient client = RelockClient.builder()
                        .redisUri(server.uri())
                        .commandTimeout(COMMAND_TIMEOUT)
                        .defaultLease(Duration.ofMillis(300))
                        .leaseLostListener(lost::add)
                        .build()) {
            RelockLock lock = client.lock("replaced");
            lock.lock();
            server.execute("DEL", "relock:{replaced}");
            server.execute("SET", "relock:{replaced}", "squatter");

            await().atMost(Duration.ofSeconds(5)).until(() -> !lost.isEmpty());
            assertThat(lost.get(0).lockName()).isEqualTo("replaced");
            assertThat(lock.isHeldByCurrentThread()).isFalse();
            assertThatThrownBy(lock::unlock).isInstanceOf(LeaseLostException.class);
            assertThat(server.execute("GET", "relock:{replaced}")).isEqualTo("squatter");
            assertThat(server.execute("PTTL", "relock:{replaced}")).isEqualTo("-1");
        }
    }

    private static void assertWrongType(String lockName, ThrowingCallable call) {
        assertThatThrownBy(call)
                .isInstanceOf(RelockException.class)
                .isNotInstanceOf(RedisUnavailableException.class)
                .hasMessageContaining("WRONGTYPE")
                .hasMessageContaining("'" + lockName + "'");
    }

    private interface LockCall {
        void run(RelockLock lock) throws Exception;
    }

    /** Runs an acquire that waits forever on another thread, so a retry loop fails the test instead of hanging it. */
    private static void assertWrongTypeWithoutHanging(RelockClient client, LockCall call) throws Exception {
        RelockLock lock = client.lock("wrong-type");
        CompletableFuture<Void> attempt = CompletableFuture.runAsync(() -> {
            try {
                call.run(lock);
            } catch (RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        Throwable failure;
        try {
            attempt.get(NO_HANG.toMillis(), TimeUnit.MILLISECONDS);
            throw new AssertionError("an acquire of a lock whose key is a string succeeded");
        } catch (TimeoutException e) {
            throw new AssertionError("an acquire that waits forever kept retrying WRONGTYPE for " + NO_HANG, e);
        } catch (ExecutionException e) {
            failure = e.getCause();
        }
        assertThat(failure)
                .isInstanceOf(RelockException.class)
                .isNotInstanceOf(RedisUnavailableException.class)
                .hasMessageContaining("WRONGTYPE")
                .hasMessageContaining("'wrong-type'");
    }
}
