package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.relock.internal.script.LuaScript;
import dev.relock.internal.script.SingleServerScripts;
import dev.relock.testredis.RedisServer;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The scripts run by EVALSHA; after SCRIPT FLUSH (or a restart) Redis answers NOSCRIPT and relock must send them
 * again by EVAL: for acquire, release, force-unlock and the lease keeper's renewals.
 */
@Tag("redis")
class ScriptCacheFaultTest {

    private static final Duration LEASE = Duration.ofSeconds(1);
    private static final Duration COMMAND_TIMEOUT = Duration.ofMillis(800);

    private final List<LeaseLost> lost = new CopyOnWriteArrayList<>();

    private RelockClient client(RedisServer server) {
        return RelockClient.builder()
                .redisUri(server.uri())
                .defaultLease(LEASE)
                .commandTimeout(COMMAND_TIMEOUT)
                .leaseLostListener(lost::add)
                .build();
    }

    private static boolean cached(RedisServer server, LuaScript script) {
        return server.execute("SCRIPT", "EXISTS", script.sha()).equals("[1]");
    }

    @Test
    void lockAndUnlockWorkAfterTheScriptCacheIsFlushed() throws Exception {
        try (RedisServer server = RedisServer.start(); RelockClient client = client(server)) {
            RelockLock lock = client.lock("flushed-scripts");
            lock.lock();
            lock.unlock();
            assertThat(cached(server, SingleServerScripts.ACQUIRE)).isTrue();

            server.scriptFlush();
            assertThat(cached(server, SingleServerScripts.ACQUIRE)).isFalse();

            assertThat(lock.tryLock()).isTrue();
            assertThat(cached(server, SingleServerScripts.ACQUIRE)).as("acquire reloaded by EVAL").isTrue();
            server.scriptFlush();
            assertThat(lock.tryLock()).as("re-entry").isTrue();
            assertThat(lock.getHoldCount()).isEqualTo(2);
            server.scriptFlush();
            lock.unlock();
            server.scriptFlush();
            lock.unlock();
            assertThat(lock.isLocked()).isFalse();
            assertThat(cached(server, SingleServerScripts.RELEASE)).as("release reloaded by EVAL").isTrue();

            server.scriptFlush();
            lock.lock();
            server.scriptFlush();
            assertThat(lock.forceUnlock()).isTrue();
            assertThat(lock.isLocked()).isFalse();
            assertThatThrownBy(lock::unlock).isInstanceOf(LeaseLostException.class);
        }
    }

    @Test
    void renewalsReloadTheScriptSoAHoldOutlivesManyLeasesAcrossFlushes() throws Exception {
        try (RedisServer server = RedisServer.start();
                RelockClient holder = client(server);
                RelockClient other = client(server)) {
            RelockLock lock = holder.lock("renewed-across-flushes");
            try (LockHandle handle = lock.acquire()) {
                for (int lease = 0; lease < 5; lease++) {
                    server.scriptFlush();
                    Thread.sleep(LEASE.toMillis()); // on purpose: let a whole lease pass with the cache flushed
                    assertThat(handle.isValid()).as("valid after lease %d", lease + 1).isTrue();
                    assertThat(other.lock("renewed-across-flushes").tryLock())
                            .as("still held in Redis after lease %d", lease + 1).isFalse();
                }
                assertThat(cached(server, SingleServerScripts.RENEW)).as("renew.lua reloaded by EVAL").isTrue();
                assertThat(lost).isEmpty();
                assertThat(lock.remainingLease()).hasValueSatisfying(left -> assertThat(left).isPositive());
            }
            assertThat(lost).isEmpty();
            assertThat(lock.isLocked()).isFalse();
        }
    }

    @Test
    void aWaiterIsHandedTheLockAfterTheScriptCacheIsFlushed() throws Exception {
        try (RedisServer server = RedisServer.start();
                RelockClient holder = client(server);
                RelockClient waiterClient = client(server)) {
            RelockLock lock = holder.lock("handoff-after-flush");
            lock.lock();
            CountDownLatch waiting = new CountDownLatch(1);
            CompletableFuture<Boolean> waiter = CompletableFuture.supplyAsync(() -> {
                RelockLock theirs = waiterClient.lock("handoff-after-flush");
                waiting.countDown();
                try {
                    Optional<LockHandle> handle = theirs.tryAcquire(Duration.ofSeconds(10));
                    handle.ifPresent(LockHandle::close);
                    return handle.isPresent();
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            waiting.await();
            await().atMost(Duration.ofSeconds(5))
                    .until(() -> "1".equals(server.execute("ZCARD", "relock:{handoff-after-flush}:queue")));
            server.scriptFlush();
            lock.unlock();
            assertThat(waiter.get(15, TimeUnit.SECONDS)).as("the waiter got the lock").isTrue();
            assertThat(lost).isEmpty();
        }
    }

    // The two tests below send a fire-and-forget script (withdraw.lua after an acquire whose reply timed out, release.lua
    // to clean up a lost hold) that relock relies on reaching Redis before the same thread's next command, on the same
    // connection. When that script is not in Redis' script cache, RedisCalls.run only sends it (by EVAL) after the
    // NOSCRIPT reply comes back, i.e. after commands sent meanwhile: the order was lost (fixed: such scripts go by EVAL,
    // and no fallback follows a reply the caller gave up on).

    @Test
    void acquiresThatTimedOutLeaveNoLockBehindEvenWhenWithdrawIsNotCached() throws Exception {
        try (RedisServer server = RedisServer.start();
                // the default 30 s lease: a lingering ownerless lock would block others for that long
                RelockClient client = RelockClient.builder().redisUri(server.uri())
                        .commandTimeout(Duration.ofMillis(500)).build();
                RelockClient other = RelockClient.builder().redisUri(server.uri())
                        .commandTimeout(Duration.ofMillis(500)).build()) {
            RelockLock lock = client.lock("timed-out");
            assertThat(lock.tryLock()).isTrue(); // acquire.lua and release.lua are cached, withdraw.lua is not
            lock.unlock();
            assertThat(cached(server, SingleServerScripts.WITHDRAW)).isFalse();

            server.pause();
            try {
                for (int attempt = 0; attempt < 2; attempt++) {
                    assertThatThrownBy(lock::tryLock).isInstanceOf(RedisUnavailableException.class);
                }
            } finally {
                server.resume();
            }
            assertThat(lock.getHoldCount()).isZero();
            // both attempts were applied after the resume and must have been undone by their withdrawals
            await().atMost(Duration.ofSeconds(5))
                    .pollInSameThread()
                    .untilAsserted(() -> assertThat(server.execute("EXISTS", "relock:{timed-out}"))
                            .as("lock left behind: %s", server.execute("HGETALL", "relock:{timed-out}"))
                            .isEqualTo("0"));
            assertThat(other.lock("timed-out").tryLock()).isTrue();
            other.lock("timed-out").unlock();
        }
    }

    @Test
    void theCleanUpOfALostHoldDoesNotDeleteTheSameThreadsNextHold() throws Exception {
        try (RedisServer server = RedisServer.start(); RelockClient client = client(server)) {
            RelockLock lock = client.lock("lost-then-relocked");
            lock.lock();
            // as after a restart without persistence: keys and scripts gone
            server.flushAll();
            server.scriptFlush();
            await().atMost(Duration.ofSeconds(5)).until(() -> !lost.isEmpty());
            // another lock of the client is taken meanwhile, so acquire.lua is cached again but release.lua is not
            RelockLock unrelated = client.lock("unrelated");
            assertThat(unrelated.tryLock()).isTrue();
            assertThat(cached(server, SingleServerScripts.RELEASE)).isFalse();

            boolean relocked = false;
            try {
                lock.unlock();
            } catch (LeaseLostException expected) {
                relocked = lock.tryLock(); // at once, as a retry loop would
            }
            assertThat(relocked).as("unlock threw LeaseLostException and tryLock() succeeded").isTrue();
            long newToken = lock.fencingToken().orElse(-1);
            Thread.sleep(2 * LEASE.toMillis()); // on purpose: let renewals of the new hold run
            assertThat(server.execute("EXISTS", "relock:{lost-then-relocked}")).as("the new hold is in Redis")
                    .isEqualTo("1");
            assertThat(lock.isHeldByCurrentThread()).isTrue();
            assertThat(lost).as("only the first hold was lost").hasSize(1);
            assertThat(newToken).isPositive();
            lock.unlock();
            unrelated.unlock();
        }
    }
}
