package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.relock.testredis.RedisServer;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Redis loses a held lock (FLUSHALL, restart without persistence): another client may take it at once, and the
 * holder is told, by its lease keeper, within a few leases: listener, {@code whenLost()}, {@code isValid()},
 * {@code isHeldByCurrentThread()} and a {@link LeaseLostException} from unlock. Fencing tokens keep rising.
 */
@Tag("redis")
class RedisDataLossFaultTest {

    private static final Duration LEASE = Duration.ofMillis(450);
    private static final Duration COMMAND_TIMEOUT = Duration.ofMillis(700);
    // the loss is found at the next renewal (lease/3) or when the lease runs out locally; this only catches hangs
    private static final Duration DETECTION = Duration.ofSeconds(5);
    private static final Duration RECONNECT = Duration.ofSeconds(20);

    private final List<LeaseLost> lost = new CopyOnWriteArrayList<>();

    private RelockClient holderClient(RedisServer server) {
        return FaultClients.renewing(server.uri(), LEASE, COMMAND_TIMEOUT, lost::add);
    }

    private static RelockClient otherClient(RedisServer server) {
        return RelockClient.builder().redisUri(server.uri()).commandTimeout(COMMAND_TIMEOUT).build();
    }

    @Test
    void flushAllLosesTheLockAndTheHolderIsTold() throws Exception {
        try (RedisServer server = RedisServer.start();
                RelockClient holder = holderClient(server);
                RelockClient other = otherClient(server)) {
            RelockLock lock = holder.lock("flushed");
            LockHandle handle = lock.acquire();
            long lostToken = handle.fencingToken();

            server.flushAll();

            // the lock is gone from Redis: anybody may take it at once, with a greater token
            RelockLock otherView = other.lock("flushed");
            assertThat(otherView.tryLock()).as("lock free right after FLUSHALL").isTrue();
            assertThat(otherView.fencingToken().orElseThrow()).isGreaterThan(lostToken);

            LeaseLost event = handle.whenLost().toCompletableFuture().get(DETECTION.toMillis(), TimeUnit.MILLISECONDS);
            assertThat(event.lockName()).isEqualTo("flushed");
            assertThat(event.fencingToken()).isEqualTo(lostToken);
            await().atMost(DETECTION).until(() -> !lost.isEmpty());
            assertThat(lost).containsExactly(event);
            assertThat(handle.isValid()).isFalse();
            assertThat(handle.state()).isEqualTo(LeaseState.LOST);
            assertThat(lock.isHeldByCurrentThread()).isFalse();

            assertThatThrownBy(lock::unlock)
                    .isInstanceOf(LeaseLostException.class)
                    .hasMessageContaining("flushed");
            assertThat(lock.getHoldCount()).isZero();
            // the lost hold's clean-up must not release the new holder's lock
            assertThat(otherView.isHeldByCurrentThread()).isTrue();
            assertThat(holder.lock("flushed").tryLock()).as("still held by the other client").isFalse();
            otherView.unlock();

            // the holder's client still works afterwards
            assertThat(lock.tryLock()).isTrue();
            lock.unlock();
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"kill", "stop"})
    void restartWithoutPersistenceLosesTheLockAndTokensKeepRising(String how) throws Exception {
        try (RedisServer server = RedisServer.start();
                RelockClient holder = holderClient(server)) {
            RelockLock lock = holder.lock("restarted");
            LockHandle handle = lock.acquire();
            long tokenBefore = handle.fencingToken();

            if (how.equals("kill")) {
                server.kill();
            } else {
                server.stop();
            }
            server.restart();
            assertThat(server.execute("EXISTS", "relock:{restarted}")).as("no persistence: the key is gone")
                    .isEqualTo("0");

            LeaseLost event = handle.whenLost().toCompletableFuture().get(
                    RECONNECT.toMillis(), TimeUnit.MILLISECONDS);
            assertThat(event.lockName()).isEqualTo("restarted");
            assertThat(event.fencingToken()).isEqualTo(tokenBefore);
            await().atMost(DETECTION).until(() -> !lost.isEmpty());
            assertThat(lost).containsExactly(event);
            assertThat(handle.isValid()).isFalse();
            assertThat(lock.isHeldByCurrentThread()).isFalse();
            assertThatThrownBy(handle::close).isInstanceOf(LeaseLostException.class);

            // the client reconnects by itself; new holds work on the restarted server, with greater tokens
            await().atMost(RECONNECT)
                    .pollInSameThread() // the hold belongs to the thread that takes it
                    .ignoreException(RedisUnavailableException.class)
                    .until(lock::tryLock);
            try {
                assertThat(lock.fencingToken().orElseThrow()).isGreaterThan(tokenBefore);
            } finally {
                lock.unlock();
            }
            try (RelockClient other = otherClient(server);
                    LockHandle after = other.lock("restarted").acquire()) {
                assertThat(after.fencingToken()).isGreaterThan(tokenBefore);
                assertThat(after.isValid()).isTrue();
            }

            // the wake-up channel is subscribed again, and a release wakes the restarted client's waiter
            String channel = "relock:wake:" + holder.clientId();
            await().atMost(RECONNECT).until(() -> server.execute("PUBSUB", "NUMSUB", channel).endsWith(", 1]"));
            try (RelockClient other = otherClient(server)) { // 30 s lease: only a wake-up gets the waiter in sooner
                RelockLock theirs = other.lock("handoff-after-restart");
                theirs.lock();
                CompletableFuture<Boolean> waiter = CompletableFuture.supplyAsync(() -> {
                    try {
                        Optional<LockHandle> woken = holder.lock("handoff-after-restart")
                                .tryAcquire(Duration.ofSeconds(10));
                        woken.ifPresent(LockHandle::close);
                        return woken.isPresent();
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                });
                await().atMost(DETECTION)
                        .until(() -> "1".equals(server.execute("ZCARD", "relock:{handoff-after-restart}:queue")));
                theirs.unlock();
                assertThat(waiter.get(15, TimeUnit.SECONDS)).as("waiter woken after the restart").isTrue();
            }
        }
    }
}
