package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.relock.testredis.RedisServer;
import java.time.Duration;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Redis stopped or frozen (SIGSTOP): calls fail with {@link RedisUnavailableException} within the command timeout
 * instead of hanging, {@code lock()} keeps trying until Redis is back, and a hold whose lease ran out meanwhile is
 * reported lost. The bounds below are generous margins over the command timeout that only catch hangs.
 */
@Tag("redis")
class RedisDownFaultTest {

    private static final Duration COMMAND_TIMEOUT = Duration.ofMillis(700);
    private static final Duration MARGIN = Duration.ofSeconds(3);
    private static final Duration RECOVERY = Duration.ofSeconds(20);

    private static RelockClient client(RedisServer server, Duration lease, List<LeaseLost> lost) {
        return FaultClients.renewing(server.uri(), lease, COMMAND_TIMEOUT, lost::add);
    }

    private static void assertUnavailableWithin(Duration bound, String lockName, ThrowingCallable call) {
        long start = System.nanoTime();
        assertThatThrownBy(call)
                .isInstanceOf(RedisUnavailableException.class)
                .hasMessageContaining("'" + lockName + "'");
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        assertThat(took).as("time to fail").isLessThan(bound);
    }

    @Test
    void whileRedisIsStoppedCallsFailFastAndLockWaitsForItsReturn() throws Exception {
        List<LeaseLost> lost = new CopyOnWriteArrayList<>();
        try (RedisServer server = RedisServer.start();
                RelockClient client = client(server, Duration.ofSeconds(10), lost)) {
            RelockLock held = client.lock("held-while-down");
            held.lock();
            RelockLock lock = client.lock("down");
            server.stop();
            try {
                assertUnavailableWithin(COMMAND_TIMEOUT.plus(MARGIN), "down", lock::tryLock);
                assertUnavailableWithin(Duration.ofSeconds(1).plus(COMMAND_TIMEOUT).plus(MARGIN), "down",
                        () -> lock.tryLock(1, TimeUnit.SECONDS));
                assertUnavailableWithin(COMMAND_TIMEOUT.plus(MARGIN), "down",
                        () -> lock.tryAcquire(Duration.ZERO));
                assertThat(lock.isHeldByCurrentThread()).isFalse();

                long start = System.nanoTime();
                assertThatThrownBy(held::unlock)
                        .isInstanceOf(RelockException.class)
                        .hasMessageContaining("'held-while-down'");
                assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(COMMAND_TIMEOUT.plus(MARGIN));
                assertThat(held.isHeldByCurrentThread()).as("given up locally; the lease runs out in Redis")
                        .isFalse();

                CompletableFuture<OptionalLong> waitingForever = CompletableFuture.supplyAsync(() -> {
                    lock.lock();
                    try {
                        assertThat(lock.isHeldByCurrentThread()).isTrue();
                        return lock.fencingToken();
                    } finally {
                        lock.unlock();
                    }
                });
                // lock() does not give up while Redis is down: several command timeouts pass without a result
                await().during(COMMAND_TIMEOUT.multipliedBy(3))
                        .atMost(COMMAND_TIMEOUT.multipliedBy(3).plus(MARGIN))
                        .until(() -> !waitingForever.isDone());

                server.restart();
                OptionalLong token = waitingForever.get(RECOVERY.toMillis(), TimeUnit.MILLISECONDS);
                assertThat(token).isPresent();
            } finally {
                if (!server.isRunning()) {
                    server.restart();
                }
            }
            assertThat(lock.tryLock()).isTrue();
            lock.unlock();
            assertThat(lost).isEmpty();
        }
    }

    @Test
    void whileRedisIsPausedCallsTimeOutAndWorkAgainAfterResume() throws Exception {
        List<LeaseLost> lost = new CopyOnWriteArrayList<>();
        try (RedisServer server = RedisServer.start();
                RelockClient client = client(server, Duration.ofSeconds(10), lost)) {
            RelockLock lock = client.lock("paused");
            assertThat(lock.tryLock()).isTrue();
            lock.unlock();
            server.pause();
            try {
                assertUnavailableWithin(COMMAND_TIMEOUT.plus(MARGIN), "paused", lock::tryLock);
                assertUnavailableWithin(Duration.ofMillis(500).plus(COMMAND_TIMEOUT).plus(MARGIN), "paused",
                        () -> lock.tryLock(500, TimeUnit.MILLISECONDS));
                assertThat(lock.isHeldByCurrentThread()).isFalse();
            } finally {
                server.resume();
            }
            // (whether the timed-out attempts were undone is ScriptCacheFaultTest's concern)
            assertThat(lock.tryLock()).isTrue();
            assertThat(lock.isHeldByCurrentThread()).isTrue();
            try (RelockClient other = client(server, Duration.ofSeconds(10), lost)) {
                assertThat(other.lock("paused").tryLock()).isFalse();
                lock.unlock();
                assertThat(lock.isLocked()).isFalse();
                assertThat(other.lock("paused").tryLock()).isTrue();
                other.lock("paused").unlock();
            }
            assertThat(lost).isEmpty();
        }
    }

    @Test
    void whileRedisIsPausedALeaseExtensionTimesOutAndTheHoldKeepsTheLeaseItHad() throws Exception {
        List<LeaseLost> lost = new CopyOnWriteArrayList<>();
        try (RedisServer server = RedisServer.start();
                RelockClient client = client(server, Duration.ofSeconds(10), lost)) {
            RelockLock lock = client.lock("extended-while-paused");
            LockHandle handle = lock.tryAcquire(Duration.ZERO, Duration.ofSeconds(5)).orElseThrow();
            server.pause();
            try {
                assertUnavailableWithin(COMMAND_TIMEOUT.plus(MARGIN), "extended-while-paused",
                        () -> handle.extendLease(Duration.ofMinutes(1)));
            } finally {
                server.resume();
            }
            assertThat(client.heldLocks()).singleElement().satisfies(held -> {
                assertThat(held.remainingLease()).as("the lease as counted before").isLessThanOrEqualTo(Duration.ofSeconds(5));
                assertThat(held.renewed()).isFalse();
            });
            assertThat(handle.isValid()).isTrue();
            handle.extendLease(Duration.ofMinutes(1));
            assertThat(client.heldLocks()).singleElement()
                    .satisfies(held -> assertThat(held.remainingLease()).isGreaterThan(Duration.ofSeconds(50)));
            handle.close();
            assertThat(lock.isLocked()).isFalse();
            assertThat(lost).isEmpty();
        }
    }

    @Test
    void aHoldFrozenLongerThanItsLeaseIsReportedLost() throws Exception {
        List<LeaseLost> lost = new CopyOnWriteArrayList<>();
        Duration lease = Duration.ofMillis(500);
        try (RedisServer server = RedisServer.start();
                RelockClient holder = client(server, lease, lost);
                RelockClient other = client(server, lease, new CopyOnWriteArrayList<>())) {
            RelockLock lock = holder.lock("frozen");
            LockHandle handle = lock.acquire();
            server.pause();
            try {
                Thread.sleep(lease.multipliedBy(3).toMillis()); // on purpose: let the lease run out while frozen
            } finally {
                server.resume();
            }
            LeaseLost event = handle.whenLost().toCompletableFuture()
                    .get(lease.plus(COMMAND_TIMEOUT).plus(MARGIN).toMillis(), TimeUnit.MILLISECONDS);
            assertThat(event.lockName()).isEqualTo("frozen");
            assertThat(event.fencingToken()).isEqualTo(handle.fencingToken());
            await().atMost(MARGIN).until(() -> lost.contains(event));
            assertThat(handle.isValid()).isFalse();
            assertThat(lock.isHeldByCurrentThread()).isFalse();
            assertThatThrownBy(handle::close).isInstanceOf(LeaseLostException.class);

            // the lease ran out in Redis too: somebody else gets the lock, with a greater token
            RelockLock theirs = other.lock("frozen");
            assertThat(theirs.tryLock(RECOVERY.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
            assertThat(theirs.fencingToken().orElseThrow()).isGreaterThan(event.fencingToken());
            theirs.unlock();
        }
    }
}
