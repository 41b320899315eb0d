package dev.relock.internal.single;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.relock.LeaseLostException;
import dev.relock.LockHandle;
import dev.relock.RelockClient;
import dev.relock.RelockLock;
import dev.relock.internal.engine.EngineClient;
import dev.relock.internal.engine.Hold;
import dev.relock.internal.engine.LockKeys;
import dev.relock.testredis.RedisServer;
import java.lang.reflect.Field;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The client's line for a write lock ({@link LocalLines}) against a hold of the same client that ends without a
 * hand-over: given up unseen (an asynchronous acquisition whose caller cancelled it as it took the lock) or reported
 * lost. A thread that joins the line behind that hold is never left in it with nobody leading. The interleaving is
 * made, not waited for: the joiner is held between its check of the hold and its entry in the line (the line map's
 * entry for the lock is being computed) while the hold ends.
 */
class LocalLinesTest {

    private static final Duration HANG = Duration.ofSeconds(10);

    private RedisServer redis;
    private RelockClient client;

    @BeforeEach
    void start() {
        redis = RedisServer.start();
        // a long lease: a waiter left in the line would wait for its end, far past HANG
        client = RelockClient.builder().redisUri(redis.uri()).defaultLease(Duration.ofMinutes(3)).build();
    }

    @AfterEach
    void stop() {
        try {
            client.close();
        } finally {
            redis.close();
        }
    }

    @Test
    void aThreadThatJoinsTheLineOfAHoldGivenUpUnseenIsWoken() throws Exception {
        String name = "given-up-unseen";
        RelockLock lock = client.lock(name);
        LockHandle unseen = lock.acquire();

        CompletableFuture<Void> joiner = joinWhileTheHoldEnds(name, lock, engine()::releaseUnseen);

        // woken, the joiner takes the lock (the hold's release went to Redis first); left in the line, it would wait
        // for the hold's lease end, 3 minutes
        joiner.get(HANG.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(unseen.isValid()).isFalse();
        assertThat(lock.isLocked()).isFalse();
    }

    @Test
    void aThreadThatJoinsTheLineOfAHoldReportedLostIsWoken() throws Exception {
        String name = "reported-lost";
        RelockLock lock = client.lock(name);
        LockHandle lost = lock.acquire();

        CompletableFuture<Void> joiner = joinWhileTheHoldEnds(name, lock,
                hold -> engine().reportLost(hold, "lost in a test"));

        // woken, the joiner tries in Redis, which still has the lost hold's key: it waits in the lock's queue there
        await("the joiner waits in Redis").atMost(HANG)
                .until(() -> Long.parseLong(redis.execute("ZCARD", "relock:{" + name + "}:queue")) == 1);
        assertThatThrownBy(lost::close).isInstanceOf(LeaseLostException.class);
        joiner.get(HANG.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(lock.isLocked()).isFalse();
    }

    /**
     * Starts a thread that takes {@code lock} (named {@code name}) while a hold of the client leads its line, holds
     * that thread between its check of the hold and its entry in the line, ends the hold there with {@code end}, and
     * lets the thread go on; returns the thread's lock() and unlock().
     */
    private CompletableFuture<Void> joinWhileTheHoldEnds(String name, RelockLock lock, Consumer<Hold> end)
            throws Exception {
        LockKeys keys = LockKeys.of("relock", name);
        Hold hold = ((EngineClient) client).holds().liveWriter(keys);
        assertThat(hold).isNotNull();
        // holds the map's entry for the lock while it computes: a joiner that found the hold live waits for it
        CountDownLatch computing = new CountDownLatch(1);
        CountDownLatch mayEnd = new CountDownLatch(1);
        CompletableFuture<Void> entry = CompletableFuture.runAsync(() -> linesOf(engine().localLines()).compute(keys,
                (k, line) -> {
                    computing.countDown();
                    awaitQuietly(mayEnd);
                    return line;
                }));
        assertThat(computing.await(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        CompletableFuture<Void> joiner = CompletableFuture.runAsync(() -> {
            lock.lock();
            lock.unlock();
        });
        await("the joiner held between its check of the hold and its entry in the line").atMost(HANG)
                .until(() -> threadIn("joinHolder"));
        CompletableFuture.runAsync(() -> end.accept(hold)).get(HANG.toMillis(), TimeUnit.MILLISECONDS);
        mayEnd.countDown();
        entry.get(HANG.toMillis(), TimeUnit.MILLISECONDS);
        return joiner;
    }

    private SingleServerEngine engine() {
        return (SingleServerEngine) ((EngineClient) client).engine();
    }

    /** Whether a thread blocked on a monitor is in a method named {@code method}. */
    private static boolean threadIn(String method) {
        return Thread.getAllStackTraces().entrySet().stream()
                .anyMatch(thread -> thread.getKey().getState() == Thread.State.BLOCKED && Arrays.stream(
                        thread.getValue()).anyMatch(frame -> frame.getMethodName().equals(method)));
    }

    @SuppressWarnings("unchecked")
    private static ConcurrentHashMap<LockKeys, Object> linesOf(LocalLines lines) {
        try {
            Field field = LocalLines.class.getDeclaredField("lines");
            field.setAccessible(true);
            return (ConcurrentHashMap<LockKeys, Object>) field.get(lines);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError("LocalLines keeps its lines in a field 'lines'", e);
        }
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            assertThat(latch.await(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
