package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.relock.testredis.TcpProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Threads of one client waiting for a write lock another of its threads holds wait in the JVM, in the lock's line,
 * not in Redis: the holder's release names the first of them its successor, and Redis makes it the holder in that
 * release when nobody waits in its queue. Redis still decides every hand-over (new fencing token, owner checked), and a
 * client waiting in its queue goes first.
 */
@Tag("redis")
class LocalLineTest extends OneServerTestBase {

    @Test
    void aHandOverBetweenTwoThreadsOfOneClientIsTheReleaseAlone() throws Exception {
        // a long lease: no renewal pass runs while the scripts are counted
        RelockClient client = newClient(builder -> builder.defaultLease(Duration.ofMinutes(3)));
        RelockLock lock = client.lock("in-line");
        lock.lock();
        lock.unlock();
        lock.lock();
        long firstToken = lock.fencingToken().orElseThrow();
        long scriptsBefore = scriptCalls();
        CountDownLatch acquired = new CountDownLatch(1);
        CountDownLatch mayUnlock = new CountDownLatch(1);
        CompletableFuture<Long> waiter = holdingInNewThread("in-line-waiter", lock, HANG, acquired, mayUnlock);
        awaitWaiting("in-line-waiter");
        assertThat(scriptCalls() - scriptsBefore).as("the waiter sent nothing").isZero();
        assertThat(queue("in-line")).as("nobody waits in Redis").isEmpty();
        String holder = admin().hget("relock:{in-line}", "~writer");

        lock.unlock();
        assertThat(acquired.await(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        assertThat(scriptCalls() - scriptsBefore).as("the release only").isEqualTo(1);
        String successor = admin().hget("relock:{in-line}", "~writer");
        assertThat(successor).as("the holder Redis knows").startsWith(client.clientId() + ":").isNotEqualTo(holder);
        assertThat(admin().pttl("relock:{in-line}")).isGreaterThan(Duration.ofMinutes(2).toMillis());
        mayUnlock.countDown();
        assertThat(resultOf(waiter)).as("a new fencing token, from Redis").isGreaterThan(firstToken)
                .isEqualTo(Long.parseLong(admin().get("relock:{in-line}:fence")));
        assertThat(lock.isLocked()).isFalse();
    }

    /** A thread of another client that waits in Redis goes before the line, even if it came after it. */
    @Test
    void aClientWaitingInRedisGoesBeforeTheLine() throws Exception {
        RelockClient client = newClient(builder -> builder.defaultLease(Duration.ofMinutes(3)));
        RelockLock lock = client.lock("fair");
        RelockLock other = newClient(builder -> builder.defaultLease(Duration.ofMinutes(3))).lock("fair");
        lock.lock();
        List<String> order = new ArrayList<>();
        CountDownLatch sibling = new CountDownLatch(1);
        CompletableFuture<Void> inLine = inNewThread("line", () -> {
            assertThat(lock.tryLock(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
            synchronized (order) {
                order.add("line");
            }
            sibling.countDown();
            lock.unlock();
            return null;
        });
        awaitWaiting("line");
        CompletableFuture<Void> inRedis = inNewThread("queue", () -> {
            assertThat(other.tryLock(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
            synchronized (order) {
                order.add("other client");
            }
            other.unlock();
            return null;
        });
        await().atMost(HANG).until(() -> queue("fair").size() == 1);

        lock.unlock();
        resultOf(inRedis);
        resultOf(inLine);
        assertThat(order).containsExactly("other client", "line");
    }

    /**
     * The client's channel is subscribed again while a thread of it waits in its line: the thread stays there (a
     * release of its own client tells it, never a message), and the holder's release hands the lock over to it. It
     * went to Redis's queue on the resubscription that wakes the client's waiters in Redis, found by
     * ConditionModelTest.
     */
    @Test
    void aResubscriptionLeavesAThreadInItsClientsLine() throws Exception {
        try (TcpProxy proxy = TcpProxy.to(redis)) {
            RelockLock lock = newClient(builder -> builder.redisUri(proxy.uri()).defaultLease(Duration.ofMinutes(3)))
                    .lock("resubscribed");
            assertThat(proxy.connections()).hasSize(2);
            lock.lock();
            CountDownLatch acquired = new CountDownLatch(1);
            CompletableFuture<Long> waiter = holdingInNewThread("in-line-waiter", lock, HANG, acquired,
                    new CountDownLatch(0));
            awaitWaiting("in-line-waiter");
            proxy.connections().get(1).reset(); // the pub/sub connection: Lettuce connects and subscribes again
            await().atMost(HANG).until(() -> proxy.connectionCount() == 2);
            await().during(Duration.ofSeconds(1)).atMost(HANG)
                    .until(() -> queue("resubscribed").isEmpty() && acquired.getCount() == 1);
            lock.unlock();
            assertThat(resultOf(waiter)).isPositive();
        }
    }

    /** A thread in the line whose holder never releases tries in Redis at the end of the holder's lease. */
    @Test
    void aThreadInTheLineTriesInRedisWhenItsHolderNeverComesBack() throws Exception {
        RelockClient client = newClient(builder -> builder.defaultLease(Duration.ofMinutes(3)));
        RelockLock lock = client.lock("holder-gone");
        // a fixed lease, never renewed, never released by its owner
        assertThat(lock.tryLock(0, 1, TimeUnit.SECONDS)).isTrue();
        long start = System.nanoTime();
        CompletableFuture<Long> waiter = holdingInNewThread("after-lease", lock, Duration.ofMinutes(2),
                new CountDownLatch(1), new CountDownLatch(0));
        assertThat(resultOf(waiter)).isPositive();
        assertThat(millisSince(start)).as("not before the lease ran out").isGreaterThanOrEqualTo(900);
        // the first hold is lost; its owner's unlock says so
        await().atMost(HANG).until(() -> !lock.isHeldByCurrentThread());
    }

    /**
     * A timed wait in the line sends nothing until its deadline, then tries in Redis once, as every waiter does, and
     * leaves nothing there.
     */
    @Test
    void aTimedWaitInTheLineTriesOnceAtItsDeadlineAndLeavesNothing() throws Exception {
        RelockClient client = newClient(builder -> builder.defaultLease(Duration.ofMinutes(3)));
        RelockLock lock = client.lock("timed-out");
        lock.lock();
        lock.unlock();
        lock.lock();
        long scriptsBefore = scriptCalls();
        CompletableFuture<Boolean> waiter = inNewThread("times-out", () -> lock.tryLock(1, TimeUnit.SECONDS));
        awaitWaiting("times-out");
        assertThat(scriptCalls() - scriptsBefore).as("nothing while it waits in the line").isZero();
        assertThat(resultOf(waiter)).isFalse();
        await("its last try and its withdraw").atMost(HANG).until(() -> scriptCalls() - scriptsBefore == 2);
        assertThat(queue("timed-out")).isEmpty();
        assertThat(admin().exists("relock:{timed-out}:expiry")).isZero();
        lock.unlock();
        assertThat(admin().exists("relock:{timed-out}")).isZero();
    }

    /**
     * Review finding: an operator forces the lock open. A thread waiting in the line is not in Redis's queue, so
     * force-unlock.lua's wake-up of the queue reaches nobody for it. The script also tells the writer's client, which
     * reports the hold lost at once (its next renewal is a minute away here) and so wakes the line: the waiter takes
     * the lock long before its own deadline (two minutes).
     */
    @Test
    void aLockForcedOpenIsToldToItsHolderAtOnceAndItsLineTakesIt() throws Exception {
        String name = "forced-open";
        RelockClient client = newClient(builder -> builder.defaultLease(Duration.ofMinutes(3)));
        RelockLock lock = client.lock(name);
        lock.lock();
        CountDownLatch acquired = new CountDownLatch(1);
        CompletableFuture<Long> waiter = holdingInNewThread("forced-waiter", lock, Duration.ofMinutes(2), acquired,
                new CountDownLatch(0));
        awaitWaiting("forced-waiter");
        assertThat(newClient().lock(name).forceUnlock()).isTrue();
        await("the holder told").atMost(HANG).until(() -> !lock.isHeldByCurrentThread());
        assertThat(acquired.await(HANG.toMillis(), TimeUnit.MILLISECONDS)).as("the line's waiter took it").isTrue();
        assertThat(resultOf(waiter)).isPositive();
        assertThatThrownBy(lock::unlock).isInstanceOf(LeaseLostException.class);
    }

    /**
     * Review finding: Redis answers the release that names a successor with NOSCRIPT (its script cache was flushed),
     * and the EVAL that follows goes out only when that answer is in. The successor gives up meanwhile; its withdraw
     * goes at once, runs before that EVAL and finds nothing to undo, and the EVAL then makes the departed successor
     * the holder. Its client undoes that grant when the reply names it: the lock is not left taken by nobody for the
     * successor's lease (minutes).
     */
    @Test
    void aSuccessorThatGaveUpBeforeTheReleasesNoscriptFallbackIsNotLeftHolding() throws Exception {
        String name = "noscript-successor";
        try (TcpProxy proxy = TcpProxy.to(redis);
                RelockClient client = RelockClient.builder().redisUri(proxy.uri())
                        .defaultLease(Duration.ofMinutes(3)).build()) {
            RelockLock lock = client.lock(name);
            CountDownLatch held = new CountDownLatch(1);
            CountDownLatch mayUnlock = new CountDownLatch(1);
            CompletableFuture<Void> holder = inNewThread("noscript-holder", () -> {
                lock.lock();
                held.countDown();
                assertThat(mayUnlock.await(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
                lock.unlock();
                return null;
            });
            assertThat(held.await(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
            CompletableFuture<Boolean> successor = inNewThread("noscript-successor", () -> {
                try {
                    lock.lockInterruptibly();
                } catch (InterruptedException e) {
                    return false;
                }
                lock.unlock();
                return true;
            });
            awaitWaiting("noscript-successor");
            long noscripts = noscriptErrors();
            admin().scriptFlush();
            proxy.replyLatency(Duration.ofMillis(700));
            mayUnlock.countDown();
            // the release reached Redis and was answered NOSCRIPT; that answer is on its way back
            await().atMost(HANG).until(() -> noscriptErrors() > noscripts);
            threadNamed("noscript-successor").interrupt();
            assertThat(resultOf(successor)).as("the successor gave up").isFalse();
            resultOf(holder);
            proxy.replyLatency(Duration.ZERO);

            RelockLock other = newClient().lock(name);
            assertThat(other.tryLock(HANG.toMillis(), TimeUnit.MILLISECONDS)).as("the lock, free again").isTrue();
            other.unlock();
        }
    }

    /**
     * A release that hands the lock to a thread in the line, whose reply does not come (a partition): the releasing
     * thread waits for the hand-over to have run only as long as it waits for the reply, so unlock() fails within the
     * command timeout; once Redis answers again the successor holds the lock, with a token of its own.
     */
    @Test
    void aHandOverWhoseReplyDoesNotComeFailsTheUnlockWithinItsTimeoutAndTheLineGoesOn() throws Exception {
        String name = "partitioned-hand-over";
        try (TcpProxy proxy = TcpProxy.to(redis);
                RelockClient client = RelockClient.builder().redisUri(proxy.uri())
                        .commandTimeout(Duration.ofMillis(500)).defaultLease(Duration.ofMinutes(3)).build()) {
            RelockLock lock = client.lock(name);
            lock.lock();
            long firstToken = lock.fencingToken().orElseThrow();
            CompletableFuture<Long> successor = inNewThread("partitioned-successor", () -> {
                lock.lock();
                try {
                    return lock.fencingToken().orElseThrow();
                } finally {
                    lock.unlock();
                }
            });
            awaitWaiting("partitioned-successor");
            proxy.blackhole();
            long unlocking = System.nanoTime();
            assertThatThrownBy(lock::unlock).isInstanceOf(RedisUnavailableException.class);
            assertThat(Duration.ofNanos(System.nanoTime() - unlocking)).as("the command timeout, not a hang")
                    .isLessThan(HANG);
            proxy.heal();
            assertThat(resultOf(successor)).as("the successor's own token").isGreaterThan(firstToken);
            RelockLock other = newClient().lock(name);
            assertThat(other.tryLock(HANG.toMillis(), TimeUnit.MILLISECONDS)).as("the lock, free again").isTrue();
            other.unlock();
        }
    }

    /** NOSCRIPT replies the fixture server has given so far (INFO errorstats). */
    private long noscriptErrors() {
        for (String line : admin().info("errorstats").split("\r\n")) {
            if (line.startsWith("errorstat_NOSCRIPT:count=")) {
                return Long.parseLong(line.substring("errorstat_NOSCRIPT:count=".length()));
            }
        }
        return 0;
    }

    private static Thread threadNamed(String name) {
        return Thread.getAllStackTraces().keySet().stream().filter(thread -> thread.getName().equals(name))
                .findFirst().orElseThrow();
    }

    /**
     * Many threads of one client, and two of another, on one lock in a loop: each acquisition holds alone (no two
     * inside at once, tokens rising in the order of the holds), and nothing is left behind.
     */
    @Test
    void threadsOfTwoClientsTakeTurnsAloneWithRisingTokens() throws Exception {
        RelockClient many = newClient(builder -> builder.defaultLease(Duration.ofMinutes(3)));
        RelockClient few = newClient(builder -> builder.defaultLease(Duration.ofMinutes(3)));
        takeTurns(8, t -> (t < 6 ? many : few).lock("turns"), "turns");
    }

    /**
     * Threads of one client alone: the same, and the line hands over in the release alone, so the whole run costs
     * far fewer scripts than two per acquisition (an attempt and a release, as each waiter in Redis needs).
     */
    @Test
    void threadsOfOneClientTakeTurnsInTheReleaseAlone() throws Exception {
        RelockClient client = newClient(builder -> builder.defaultLease(Duration.ofMinutes(3)));
        long scriptsBefore = scriptCalls();
        int acquisitions = takeTurns(6, t -> client.lock("one-client"), "one-client");
        assertThat(scriptCalls() - scriptsBefore).as("scripts for %d acquisitions", acquisitions)
                .isLessThan(acquisitions * 3L / 2);
    }

    /**
     * Review finding: while the release of one thread hands the lock to the next, the operator view showed both as
     * holding it. Sampled while threads of one client take turns, it never lists two writers of the lock.
     */
    @Test
    void heldLocksNeverListsTwoWritersWhileThreadsTakeTurns() throws Exception {
        RelockClient client = newClient(builder -> builder.defaultLease(Duration.ofMinutes(3)));
        AtomicInteger samples = new AtomicInteger();
        AtomicInteger twoWriters = new AtomicInteger();
        AtomicBoolean turning = new AtomicBoolean(true);
        CompletableFuture<Void> sampler = inNewThread("sampler", () -> {
            while (turning.get()) {
                samples.incrementAndGet();
                if (client.heldLocks().stream().filter(held -> held.kind() == LockKind.EXCLUSIVE).count() > 1) {
                    twoWriters.incrementAndGet();
                }
            }
            return null;
        });
        try {
            takeTurns(3, t -> client.lock("watched"), "watched");
        } finally {
            turning.set(false);
        }
        resultOf(sampler);
        assertThat(twoWriters).as("of %d samples, those with two writers", samples.get()).hasValue(0);
    }

    private int takeTurns(int threads, java.util.function.IntFunction<RelockLock> lockOf, String name) throws Exception {
        int rounds = 200;
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        AtomicInteger outOfOrder = new AtomicInteger();
        AtomicLong lastToken = new AtomicLong();
        List<CompletableFuture<Integer>> done = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            RelockLock lock = lockOf.apply(t);
            done.add(inNewThread(name + "-" + t, () -> {
                for (int round = 0; round < rounds; round++) {
                    lock.lock();
                    try {
                        if (inside.incrementAndGet() != 1) {
                            overlaps.incrementAndGet();
                        }
                        // the hold's own token: no round trip
                        long token = lock.fencingToken().orElseThrow();
                        if (token <= lastToken.getAndSet(token)) {
                            outOfOrder.incrementAndGet();
                        }
                        inside.decrementAndGet();
                    } finally {
                        lock.unlock();
                    }
                }
                return rounds;
            }));
        }
        for (CompletableFuture<Integer> thread : done) {
            assertThat(thread.get(90, TimeUnit.SECONDS)).isEqualTo(rounds);
        }
        assertThat(overlaps).hasValue(0);
        assertThat(outOfOrder).hasValue(0);
        await("nothing left behind").atMost(HANG).until(() -> admin().exists("relock:{" + name + "}",
                "relock:{" + name + "}:queue", "relock:{" + name + "}:expiry") == 0);
        return threads * rounds;
    }

    /** Waits until the thread named {@code name} waits in an acquisition (parked in its run()). */
    static void awaitWaiting(String name) {
        await().atMost(HANG).until(() -> Thread.getAllStackTraces().entrySet().stream()
                .filter(thread -> thread.getKey().getName().equals(name))
                .anyMatch(thread -> (thread.getKey().getState() == Thread.State.WAITING
                        || thread.getKey().getState() == Thread.State.TIMED_WAITING)
                        && List.of(thread.getValue()).stream().anyMatch(frame ->
                                frame.getClassName().endsWith("SteppedAcquisition") && frame.getMethodName().equals("run"))));
    }

}
