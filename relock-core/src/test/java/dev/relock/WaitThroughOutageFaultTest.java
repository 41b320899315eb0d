package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.relock.internal.script.LuaScript;
import dev.relock.internal.script.SingleServerScripts;
import dev.relock.testredis.TcpProxy;
import java.time.Duration;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Issue 39: a wait with a deadline tries again while Redis is unavailable, as a wait without one does, until its
 * deadline. It takes the lock once Redis is back within the wait; it returns false when Redis last answered that the
 * lock is held; it throws {@link RedisUnavailableException} when its last try still found Redis unavailable, no later
 * than the wait plus the command timeout. A single try (no wait) fails at once. Redis is cut off by a proxy: a black
 * hole (each attempt goes out, reaches the proxy, where the test sees it, and times out) or refused connections (each
 * attempt fails at once). The bounds below are margins that only a hang exceeds.
 */
@Tag("redis")
class WaitThroughOutageFaultTest extends OneServerTestBase {

    private static final Duration COMMAND_TIMEOUT = Duration.ofMillis(500);
    // far longer than the outages here, which end at the second attempt (a command timeout and a back-off in)
    private static final Duration LONG_WAIT = Duration.ofSeconds(10);
    // an outage, or a busy lock, outlasts it
    private static final Duration SHORT_WAIT = Duration.ofSeconds(2);
    private static final Duration MARGIN = Duration.ofSeconds(3);

    private RelockClient throughProxy(TcpProxy proxy) {
        return newClient(b -> b.redisUri(proxy.uri()).commandTimeout(COMMAND_TIMEOUT));
    }

    private static Duration since(long startNanos) {
        return Duration.ofNanos(System.nanoTime() - startNanos);
    }

    @Test
    void aTryLockWithAWaitTakesTheLockOnceRedisAnswersAgainWithinIt() throws Exception {
        String name = "back-within-wait";
        try (TcpProxy proxy = TcpProxy.to(redis)) {
            RelockLock lock = throughProxy(proxy).lock(name);
            RelockLock others = newClient().lock(name);
            assertThat(lock.tryLock()).isTrue(); // the acquire script is cached: attempts go by EVALSHA
            lock.unlock();
            proxy.blackhole();
            // the second attempt is sent only after the first failed: Redis answers again from then on
            RequestsSeen attempts = RequestsSeen.watch(proxy, SingleServerScripts.ACQUIRE.sha(), 2, proxy::heal);

            long start = System.nanoTime();
            assertThat(lock.tryLock(LONG_WAIT.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
            assertThat(since(start)).as("returned once Redis answered, before the wait's end").isLessThan(LONG_WAIT);
            assertThat(attempts.count()).as("attempts sent").isGreaterThanOrEqualTo(2);
            assertThat(lock.getHoldCount()).isOne();
            assertThat(others.tryLock()).as("another client, while it is held").isFalse();
            lock.unlock();
            // the failed attempt, run by Redis after the heal, was undone by its withdraw: nothing of it is left
            assertThat(others.tryLock()).as("another client, after the one unlock").isTrue();
            others.unlock();
        }
    }

    /** The other waits with a deadline, each with the script its first attempts send. */
    enum Wait {
        ASYNC(SingleServerScripts.ACQUIRE, 2) {
            @Override
            boolean acquireAndRelease(RelockClient client, String name, Duration wait) throws Exception {
                Optional<LockHandle> handle = client.lock(name).tryAcquireAsync(wait).toCompletableFuture()
                        .get(wait.plus(MARGIN).toMillis(), TimeUnit.MILLISECONDS);
                handle.ifPresent(LockHandle::close);
                return handle.isPresent();
            }
        },
        READ_LOCK(SingleServerScripts.ACQUIRE_READ, 2) {
            @Override
            boolean acquireAndRelease(RelockClient client, String name, Duration wait) throws Exception {
                RelockLock reading = client.readWriteLock(name).readLock();
                boolean acquired = reading.tryLock(wait.toMillis(), TimeUnit.MILLISECONDS);
                if (acquired) {
                    reading.unlock();
                }
                return acquired;
            }
        },
        SEMAPHORE(SingleServerScripts.PERMITS_ACQUIRE, 2) {
            @Override
            void prepare(RelockClient client, String name) {
                client.semaphore(name).trySetPermits(1);
            }

            @Override
            boolean acquireAndRelease(RelockClient client, String name, Duration wait) throws Exception {
                Optional<PermitHandle> permit = client.semaphore(name).tryAcquire(1, wait);
                permit.ifPresent(PermitHandle::close);
                return permit.isPresent();
            }
        },
        // the script that takes every lock at once fails; the first lock's own acquisition follows it
        MULTI_LOCK(SingleServerScripts.ACQUIRE, 1) {
            @Override
            void prepare(RelockClient client, String name) {
                RelockLock first = client.lock(name + "-1");
                assertThat(first.tryLock()).isTrue();
                first.unlock();
            }

            @Override
            boolean acquireAndRelease(RelockClient client, String name, Duration wait) throws Exception {
                RelockMultiLock both = client.multiLock(name + "-1", name + "-2");
                boolean acquired = both.tryLock(wait.toMillis(), TimeUnit.MILLISECONDS);
                if (acquired) {
                    both.unlock();
                }
                return acquired;
            }
        };

        private final LuaScript script;
        private final int healAt;

        Wait(LuaScript script, int healAt) {
            this.script = script;
            this.healAt = healAt;
        }

        /** What must be in Redis before the outage. */
        void prepare(RelockClient client, String name) {
        }

        /** Waits up to {@code wait}; releases what it got. */
        abstract boolean acquireAndRelease(RelockClient client, String name, Duration wait) throws Exception;
    }

    @ParameterizedTest
    @EnumSource(Wait.class)
    void everyWaitWithADeadlineTriesAgainThroughAnOutage(Wait wait) throws Exception {
        String name = "back-within-" + wait.name().toLowerCase(Locale.ROOT);
        try (TcpProxy proxy = TcpProxy.to(redis)) {
            RelockClient client = throughProxy(proxy);
            wait.prepare(client, name);
            // its scripts are cached: attempts go by EVALSHA
            assertThat(wait.acquireAndRelease(client, name, Duration.ZERO)).isTrue();
            proxy.blackhole();
            RequestsSeen attempts = RequestsSeen.watch(proxy, wait.script.sha(), wait.healAt, proxy::heal);

            long start = System.nanoTime();
            assertThat(wait.acquireAndRelease(client, name, LONG_WAIT)).isTrue();
            assertThat(since(start)).isLessThan(LONG_WAIT);
            assertThat(attempts.count()).as("attempts sent").isGreaterThanOrEqualTo(wait.healAt);
        }
    }

    /** How Redis is out of reach. */
    enum Outage {
        // connections stay open and take requests; nothing comes back: each attempt times out
        UNANSWERED {
            @Override
            void begin(TcpProxy proxy) {
                proxy.blackhole();
            }

            @Override
            void end(TcpProxy proxy) {
                proxy.heal();
            }
        },
        // connections are reset and new ones refused: each attempt is refused by the client at once
        REFUSED {
            @Override
            void begin(TcpProxy proxy) {
                proxy.rejectNew(true);
                proxy.cutConnections();
            }

            @Override
            void end(TcpProxy proxy) {
                proxy.rejectNew(false);
            }
        };

        abstract void begin(TcpProxy proxy);

        abstract void end(TcpProxy proxy);
    }

    @ParameterizedTest
    @EnumSource(Outage.class)
    void aWaitThatRedisIsOutOfReachThroughThrowsRedisUnavailableExceptionAtItsEnd(Outage outage) throws Exception {
        String name = "out-through-" + outage.name().toLowerCase(Locale.ROOT);
        try (TcpProxy proxy = TcpProxy.to(redis)) {
            RelockLock lock = throughProxy(proxy).lock(name);
            assertThat(lock.tryLock()).isTrue();
            lock.unlock();
            outage.begin(proxy);
            try {
                assertUnavailableAtTheEndOf(SHORT_WAIT, name,
                        () -> lock.tryLock(SHORT_WAIT.toMillis(), TimeUnit.MILLISECONDS));
                assertUnavailableAtTheEndOf(SHORT_WAIT, name, () -> outcomeOf(lock.tryAcquireAsync(SHORT_WAIT)));
            } finally {
                outage.end(proxy);
            }
            // the same client waits through its reconnect
            assertThat(lock.tryLock(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
            lock.unlock();
        }
    }

    /** {@code call}, started now, throws RedisUnavailableException naming the lock, after {@code wait} and within bounds. */
    private static void assertUnavailableAtTheEndOf(Duration wait, String name, ThrowingCallable call) {
        long start = System.nanoTime();
        assertThatThrownBy(call)
                .isInstanceOf(RedisUnavailableException.class)
                .hasMessageContaining("'" + name + "'")
                .cause().as("the last try's failure").isNotNull();
        assertThat(since(start)).as("tried until the wait ended, then failed within a command timeout")
                .isGreaterThanOrEqualTo(wait)
                .isLessThan(wait.plus(COMMAND_TIMEOUT).plus(MARGIN));
    }

    @Test
    void aWaitWhoseLastTryFoundTheLockHeldEndsNotAcquiredThoughItMetAnOutage() throws Exception {
        String name = "busy-after-outage";
        RelockLock holder = newClient().lock(name);
        holder.lock();
        try (TcpProxy proxy = TcpProxy.to(redis)) {
            RelockLock lock = throughProxy(proxy).lock(name);
            assertThat(lock.tryLock()).isFalse();
            proxy.blackhole();
            RequestsSeen attempts = RequestsSeen.watch(proxy, SingleServerScripts.ACQUIRE.sha(), 2, proxy::heal);

            long start = System.nanoTime();
            assertThat(lock.tryLock(SHORT_WAIT.toMillis(), TimeUnit.MILLISECONDS)).isFalse();
            assertThat(since(start)).isGreaterThanOrEqualTo(SHORT_WAIT)
                    .isLessThan(SHORT_WAIT.plus(COMMAND_TIMEOUT).plus(MARGIN));
            assertThat(attempts.count()).as("attempts sent").isGreaterThanOrEqualTo(2);
            // it left the queue (the withdraw is sent without waiting for its reply)
            await().atMost(HANG).until(() -> queue(name).isEmpty());
        } finally {
            holder.unlock();
        }
    }

    @Test
    void aSingleTryFailsAtOnceAndTriesNothingMore() throws Exception {
        String name = "single-try";
        try (TcpProxy proxy = TcpProxy.to(redis)) {
            RelockLock lock = throughProxy(proxy).lock(name);
            assertThat(lock.tryLock()).isTrue();
            lock.unlock();
            proxy.blackhole();
            try {
                RequestsSeen attempts = RequestsSeen.count(proxy, SingleServerScripts.ACQUIRE.sha());
                assertUnavailableWithinACommandTimeout(name, lock::tryLock);
                assertUnavailableWithinACommandTimeout(name, () -> lock.tryLock(0, TimeUnit.SECONDS));
                assertUnavailableWithinACommandTimeout(name, () -> lock.tryAcquire(Duration.ZERO));
                assertUnavailableWithinACommandTimeout(name, () -> outcomeOf(lock.tryAcquireAsync(Duration.ZERO)));
                assertThat(attempts.count()).as("one attempt per call").isEqualTo(4);
            } finally {
                proxy.heal();
            }
            // what the black hole held has run once an attempt sent after it on the same connection is answered
            assertThat(lock.tryLock(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
            lock.unlock();
        }
    }

    /** The outcome of {@code stage}, or the exception it completed with; a hang fails. */
    private static <T> T outcomeOf(CompletionStage<T> stage) throws Throwable {
        try {
            return stage.toCompletableFuture().get(HANG.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw e.getCause();
        }
    }

    private static void assertUnavailableWithinACommandTimeout(String name, ThrowingCallable call) {
        long start = System.nanoTime();
        assertThatThrownBy(call).isInstanceOf(RedisUnavailableException.class).hasMessageContaining("'" + name + "'");
        assertThat(since(start)).isLessThan(COMMAND_TIMEOUT.plus(MARGIN));
    }
}
