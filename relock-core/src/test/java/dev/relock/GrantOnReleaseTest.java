package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.relock.testredis.RedisServer;
import dev.relock.testredis.TcpProxy;
import io.lettuce.core.ClientOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Grant on release: release.lua makes a waiting writer that tried recently the holder at once, and
 * its wake-up message carries the grant. The waiter then returns without another attempt; a grant
 * its waiter gave up before taking is undone by the waiter's withdraw; an attempt that crosses the
 * grant takes it; a waiter whose last attempt is too old is woken instead of granted.
 *
 * <p>The scripted waiters here use a client id nobody subscribes to, so no client takes their
 * grants: that is the state of a waiter that gave up while the grant was on its way.
 */
@Tag("redis")
class GrantOnReleaseTest extends OneServerTestBase {

    private static final String NOBODY = LockScripts.NOBODY;
    /** How long a client may take to reconnect after refused attempts (Lettuce's delay doubles up to 30 s). */
    private static final Duration RECONNECT = Duration.ofSeconds(30);

    /**
     * The waiter's subscription is down when the release grants it the lock, so the grant's message reaches nobody;
     * once its client has subscribed again, the waiter tries again and takes the grant, long before the holder's
     * lease would have ended (it waited for that lease end, the lock idle and everyone behind it waiting; found by
     * ConditionModelTest).
     */
    @Test
    void aGrantPublishedWhileTheWaitersSubscriptionWasDownIsTakenOnceItIsBack() throws Exception {
        try (TcpProxy proxy = TcpProxy.to(redis)) {
            RelockLock held = newClient(builder -> builder.defaultLease(Duration.ofMinutes(3))).lock("granted");
            RelockLock waiting = newClient(builder -> builder.redisUri(proxy.uri())
                    .defaultLease(Duration.ofMinutes(3))).lock("granted");
            assertThat(proxy.connections()).hasSize(2);
            held.lock();
            CountDownLatch acquired = new CountDownLatch(1);
            CompletableFuture<Long> waiter = holdingInNewThread("waiter", waiting, Duration.ofMinutes(2), acquired,
                    new CountDownLatch(0));
            await().atMost(HANG).until(() -> queue("granted").size() == 1);
            // connection #1 is the waiter's pub/sub one: down, and kept down while the grant is published
            proxy.rejectNew(true);
            proxy.connections().get(1).reset();
            await().atMost(HANG).until(() -> proxy.connectionCount() == 1);
            held.unlock();
            await().atMost(HANG).until(() -> admin().hget("relock:{granted}", "~granted") != null);
            proxy.rejectNew(false);
            assertThat(acquired.await(RECONNECT.toMillis(), TimeUnit.MILLISECONDS))
                    .as("the waiter took its grant once subscribed again").isTrue();
            assertThat(resultOf(waiter)).isPositive();
        }
    }

    /**
     * A grant whose message reaches the waiter only after the grant's lease ended (its pub/sub connection late: a
     * loaded machine, a slow network) is not handed out: Redis has let another owner in by then, beside whom the
     * waiter would enter with the grant's older fencing token, not told of anything (ChaosTest on Redis 6.2 under
     * load: "c2t0 (token 1796012208231310) entered chaos-rw beside c1t1 (token 1796012209570989)"). The waiter gives
     * the grant up, queues behind that owner, and gets the lock when it is released, with a newer token.
     */
    @Test
    void aGrantWhoseMessageComesAfterItsLeaseIsNotHandedOut() throws Exception {
        // the releaser grants a waiter whose attempt ran within min(its grace, the waiter's lease / 3): 2 s here
        Duration lease = Duration.ofSeconds(6);
        try (TcpProxy proxy = TcpProxy.to(redis)) {
            RelockLock held = newClient(builder -> builder.defaultLease(Duration.ofMinutes(3))
                    .handoffGrace(Duration.ofSeconds(5))).lock("late-grant");
            RelockLock waiting = newClient(builder -> builder.redisUri(proxy.uri()).defaultLease(lease))
                    .lock("late-grant");
            RelockLock later = newClient(builder -> builder.defaultLease(Duration.ofMinutes(3))).lock("late-grant");
            assertThat(proxy.connections()).hasSize(2);
            held.lock();
            CountDownLatch acquired = new CountDownLatch(1);
            CompletableFuture<Long> waiter = holdingInNewThread("waiter", waiting, Duration.ofMinutes(2), acquired,
                    new CountDownLatch(0));
            await().atMost(HANG).pollInterval(Duration.ofMillis(10)).until(() -> queue("late-grant").size() == 1);
            // connection #1 is the waiter's pub/sub one: what it carries from now on comes after the grant's lease
            proxy.connections().get(1).replyLatency(lease.plusSeconds(2));
            held.unlock();
            assertThat(admin().hget("relock:{late-grant}", "~granted")).as("the release granted the waiter").isNotNull();

            // the grant's lease ends in Redis; the next owner gets in
            assertThat(later.tryLock(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
            long laterToken = later.fencingToken().orElseThrow();
            // the grant's message comes: the waiter either enters (beside the later owner) or queues behind it
            await().atMost(HANG).until(() -> acquired.getCount() == 0 || queue("late-grant").size() == 1);
            assertThat(acquired.getCount()).as("the waiter entered beside the later owner, on the grant's token")
                    .isEqualTo(1);

            proxy.connections().get(1).replyLatency(Duration.ZERO);
            later.unlock();
            assertThat(resultOf(waiter)).isGreaterThan(laterToken);
        }
    }

    /**
     * The same for a reader granted by a writer's release (grant_readers): its grant's message comes after the
     * reader's lease ended in Redis and a writer took the lock; the reader does not enter beside that writer, and
     * reads once the writer is done, with a newer token.
     */
    @Test
    void aReadersGrantWhoseMessageComesAfterItsLeaseIsNotHandedOut() throws Exception {
        Duration lease = Duration.ofSeconds(6);
        try (TcpProxy proxy = TcpProxy.to(redis)) {
            RelockLock held = newClient(builder -> builder.defaultLease(Duration.ofMinutes(3))
                    .handoffGrace(Duration.ofSeconds(5))).readWriteLock("late-read-grant").writeLock();
            RelockLock reading = newClient(builder -> builder.redisUri(proxy.uri()).defaultLease(lease))
                    .readWriteLock("late-read-grant").readLock();
            RelockLock later = newClient(builder -> builder.defaultLease(Duration.ofMinutes(3)))
                    .readWriteLock("late-read-grant").writeLock();
            assertThat(proxy.connections()).hasSize(2);
            held.lock();
            CountDownLatch acquired = new CountDownLatch(1);
            CompletableFuture<Long> reader = holdingInNewThread("reader", reading, Duration.ofMinutes(2), acquired,
                    new CountDownLatch(0));
            await().atMost(HANG).pollInterval(Duration.ofMillis(10)).until(() -> queue("late-read-grant").size() == 1);
            // connection #1 is the reader's pub/sub one: what it carries from now on comes after the grant's lease
            proxy.connections().get(1).replyLatency(lease.plusSeconds(2));
            held.unlock();
            assertThat(admin().hkeys("relock:{late-read-grant}")).as("the release granted the reader")
                    .anyMatch(field -> field.startsWith("g|"));

            // the reader's lease ends in Redis; a writer gets in
            assertThat(later.tryLock(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
            long laterToken = later.fencingToken().orElseThrow();
            await().atMost(HANG).until(() -> acquired.getCount() == 0 || queue("late-read-grant").size() == 1);
            assertThat(acquired.getCount()).as("the reader entered beside the writer, on the grant's token")
                    .isEqualTo(1);

            proxy.connections().get(1).replyLatency(Duration.ZERO);
            later.unlock();
            assertThat(resultOf(reader)).isGreaterThan(laterToken);
        }
    }

    @Test
    void theWaitingWriterIsGrantedTheLockWithoutAnotherAttempt() throws Exception {
        // a long lease: no renewal pass runs while the scripts are counted
        RelockLock held = newClient(builder -> builder.defaultLease(Duration.ofMinutes(3))).lock("granted");
        RelockLock waiting = newClient(builder -> builder.defaultLease(Duration.ofMinutes(3))).lock("granted");
        // once before, so the release below runs from the script cache: one EVALSHA, no NOSCRIPT + EVAL
        held.lock();
        held.unlock();
        held.lock();
        long firstToken = held.fencingToken().orElseThrow();
        CountDownLatch acquired = new CountDownLatch(1);
        CountDownLatch mayUnlock = new CountDownLatch(1);
        CompletableFuture<Long> waiter = holdingInNewThread("waiter", waiting, HANG, acquired, mayUnlock);
        await().atMost(HANG).until(() -> queue("granted").size() == 1);
        long scriptsBefore = scriptCalls();

        held.unlock();
        assertThat(acquired.await(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        assertThat(scriptCalls() - scriptsBefore).as("the release only: the waiter sent no attempt").isEqualTo(1);
        assertThat(admin().hget("relock:{granted}", "~granted")).as("granted, not yet confirmed: the attempt it answers")
                .isNotNull().matches("[1-9][0-9]*");
        assertThat(admin().pttl("relock:{granted}")).isGreaterThan(Duration.ofMinutes(2).toMillis());
        assertThat(queue("granted")).isEmpty();

        mayUnlock.countDown();
        assertThat(resultOf(waiter)).isGreaterThan(firstToken);
        assertThat(held.isLocked()).isFalse();
    }

    /** The last reader's release grants the lock to the writer waiting at the head, as a write release does. */
    @Test
    void theLastReadersReleaseGrantsTheLockToTheWaitingWriter() throws Exception {
        // long leases: no renewal pass runs while the scripts are counted
        RelockReadWriteLock reading = newClient(builder -> builder.defaultLease(Duration.ofMinutes(3)))
                .readWriteLock("read-then-write");
        RelockLock writing = newClient(builder -> builder.defaultLease(Duration.ofMinutes(3)))
                .readWriteLock("read-then-write").writeLock();
        // once before, so the release below runs from the script cache
        reading.readLock().lock();
        reading.readLock().unlock();
        reading.readLock().lock();
        CountDownLatch acquired = new CountDownLatch(1);
        CountDownLatch mayUnlock = new CountDownLatch(1);
        CompletableFuture<Long> writer = holdingInNewThread("writer", writing, HANG, acquired, mayUnlock);
        await().atMost(HANG).until(() -> queue("read-then-write").size() == 1);
        long scriptsBefore = scriptCalls();

        reading.readLock().unlock();
        assertThat(acquired.await(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        assertThat(scriptCalls() - scriptsBefore).as("the release only: the writer sent no attempt").isEqualTo(1);
        assertThat(admin().hget("relock:{read-then-write}", "~granted")).as("granted, not yet confirmed: the attempt it answers")
                .isNotNull().matches("[1-9][0-9]*");
        assertThat(reading.readLock().tryLock()).as("a reader beside the granted writer").isFalse();
        mayUnlock.countDown();
        assertThat(resultOf(writer))
                .isEqualTo(Long.parseLong(admin().get("relock:{read-then-write}:fence")));
    }

    /**
     * A waiter of the releaser's own client that waits in Redis (it came while another client held the lock, so it
     * has no line to join): the grant comes back in the release's reply and is handed over there, with no wake-up
     * published and no attempt of the waiter's own.
     */
    @Test
    void aWaiterOfTheSameClientInRedisIsGrantedInTheReleasesReply() throws Exception {
        // long leases: no renewal pass runs while the scripts are counted
        RelockClient client = newClient(builder -> builder.defaultLease(Duration.ofMinutes(3)));
        RelockLock lock = client.lock("granted-here");
        RelockLock other = newClient(builder -> builder.defaultLease(Duration.ofMinutes(3))).lock("granted-here");
        lock.lock();
        lock.unlock();
        other.lock();
        CountDownLatch firstAcquired = new CountDownLatch(1);
        CountDownLatch firstMayUnlock = new CountDownLatch(1);
        CompletableFuture<Long> first = holdingInNewThread("first", lock, HANG, firstAcquired, firstMayUnlock);
        await().atMost(HANG).until(() -> queue("granted-here").size() == 1);
        CountDownLatch secondAcquired = new CountDownLatch(1);
        CompletableFuture<Long> second = holdingInNewThread("second", lock, HANG, secondAcquired, new CountDownLatch(0));
        await().atMost(HANG).until(() -> queue("granted-here").size() == 2);
        other.unlock();
        assertThat(firstAcquired.await(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        // a command behind the second waiter's attempt on the client's connection: its reply is in when this returns
        client.ping();
        long scriptsBefore = scriptCalls();
        long publishesBefore = calls("publish");

        firstMayUnlock.countDown();
        assertThat(secondAcquired.await(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        long firstToken = resultOf(first);
        // the first's release, then the second's (which ran once it counted down)
        await().atMost(HANG).until(() -> second.isDone());
        assertThat(scriptCalls() - scriptsBefore).as("the two releases only: the second sent no attempt").isEqualTo(2);
        assertThat(calls("publish") - publishesBefore).as("no wake-up published").isZero();
        assertThat(resultOf(second)).isGreaterThan(firstToken);
    }

    /**
     * The reply that would carry the grant to a waiter of the same client is lost with its connection: the release ran
     * and granted, but nobody tells the waiter. Its client has its waiters for the lock try again once the connection
     * is back, and the granted one takes its grant then, long before the holder's lease, the waiter's deadline or its
     * own next look (all minutes away).
     */
    @Test
    void aGrantWhoseReleaseReplyWasLostStillReachesTheWaiter() throws Exception {
        String name = "lost-grant-reply";
        try (TcpProxy proxy = TcpProxy.to(redis);
                RelockClient client = RelockClient.builder().redisUri(proxy.uri())
                        .defaultLease(Duration.ofMinutes(3)).build()) {
            RelockLock lock = client.lock(name);
            CountDownLatch acquired = new CountDownLatch(1);
            CompletableFuture<Long> waiter = heldWithAWaiterOfTheSameClient(client, lock, acquired);
            long firstToken = Long.parseLong(admin().hget("relock:{" + name + "}", "~token"));
            String holderOwner = admin().hget("relock:{" + name + "}", "~writer");

            proxy.loseNextReplyAndReset();
            assertThatThrownBy(lock::unlock).isInstanceOf(RedisUnavailableException.class);
            assertThat(admin().hget("relock:{" + name + "}", "~writer")).as("granted in Redis to the waiter")
                    .startsWith(client.clientId() + ":").isNotEqualTo(holderOwner);
            assertThat(acquired.await(HANG.toMillis(), TimeUnit.MILLISECONDS)).as("the waiter took its grant").isTrue();
            assertThat(resultOf(waiter)).isGreaterThan(firstToken);
        }
    }

    /**
     * Review finding: on a Lettuce client that sends again what was in flight at a reconnect, a release whose reply
     * was lost (the connection closed after Redis ran it) runs twice. The first run granted the lock to the waiter of
     * the same client, the second answers -1: a reply that carries no grant, and no failure either. The waiter must
     * still be told, at once, not at its deadline or the old holder's lease end (minutes away).
     */
    @Test
    void aReleaseRunTwiceAfterItsReplyWasLostStillHandsItsGrantOver() throws Exception {
        String name = "release-run-twice";
        onCallersClientThroughProxy(ClientOptions.create(), builder -> builder.defaultLease(Duration.ofMinutes(3)),
                (proxy, callers, client) -> {
            RelockLock lock = client.lock(name);
            CountDownLatch acquired = new CountDownLatch(1);
            CompletableFuture<Long> waiter = heldWithAWaiterOfTheSameClient(client, lock, acquired);
            // the command connection only (opened first): its next reply, the release's, is lost, then FIN
            proxy.connections().get(0).loseNextReplyAndClose();
            assertThatThrownBy(lock::unlock).as("the second run found the lock granted")
                    .isInstanceOf(LeaseLostException.class);
            assertThat(acquired.await(HANG.toMillis(), TimeUnit.MILLISECONDS)).as("the waiter took its grant").isTrue();
            assertThat(resultOf(waiter)).isPositive();
        });
    }

    /**
     * Chaos finding (ChaosTest seed 2204888643662, caller's client): a waiter's attempt timed out, so it withdrew and
     * tried again; neither got a reply before the connection dropped, and Lettuce (on its defaults) sent both again
     * after the reconnect. Meanwhile a release had granted the lock to the second attempt. The withdraw, run again,
     * undid that grant, and the attempt, run again, only queued: its reply said it ran before the grant, so the waiter
     * took a lock that Redis no longer had. Now the withdraw leaves a grant for a later attempt (withdraw.lua's
     * ARGV[6]), which the attempt run again takes.
     */
    @Test
    void aWithdrawSentAgainAfterAReconnectLeavesTheGrantToTheAttemptAfterIt() throws Exception {
        String name = "withdraw-sent-again";
        RelockLock holder = newClient(builder -> builder.defaultLease(Duration.ofMinutes(3))).lock(name);
        holder.lock();
        onCallersClientThroughProxy(ClientOptions.create(), builder -> builder.defaultLease(Duration.ofMinutes(3))
                .commandTimeout(Duration.ofSeconds(2)), (proxy, callers, client) -> {
            RelockLock lock = client.lock(name);
            // the command connection only (opened first): commands reach Redis, their replies come too late
            TcpProxy.Connection commands = proxy.connections().get(0);
            commands.replyLatency(Duration.ofMinutes(1));
            CountDownLatch acquired = new CountDownLatch(1);
            CountDownLatch mayUnlock = new CountDownLatch(1);
            CompletableFuture<Long> waiter = inNewThread("waiter", () -> {
                lock.lock(); // waits through Redis being unavailable, trying again
                acquired.countDown();
                assertThat(mayUnlock.await(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
                long token = lock.fencingToken().orElseThrow();
                lock.unlock();
                return token;
            });
            await().atMost(HANG).until(() -> offeredAttempt(name) > 0);
            long first = offeredAttempt(name);
            // the first attempt timed out (2 s), its withdraw ran and the next attempt queued again
            await().atMost(HANG).until(() -> offeredAttempt(name) > first);
            // another client waits behind it, so the second attempt run again cannot simply take the lock anew
            CountDownLatch thirdAcquired = new CountDownLatch(1);
            CountDownLatch thirdMayUnlock = new CountDownLatch(1);
            CompletableFuture<Long> third = holdingInNewThread("third", newClient().lock(name), HANG,
                    thirdAcquired, thirdMayUnlock);
            await().atMost(HANG).until(() -> queue(name).size() == 2);
            holder.unlock();
            String owner = admin().hget("relock:{" + name + "}", "~writer");
            assertThat(owner).as("granted to the second attempt").startsWith(client.clientId() + ":");
            // before the withdraw's own command timeout: Lettuce sends the withdraw and the attempt again
            commands.reset();

            assertThat(acquired.await(HANG.toMillis(), TimeUnit.MILLISECONDS)).as("the waiter took the lock").isTrue();
            assertThat(admin().hget("relock:{" + name + "}", "~writer")).as("Redis agrees").isEqualTo(owner);
            long token = Long.parseLong(admin().hget("relock:{" + name + "}", "~token"));
            assertThat(holder.tryLock()).isFalse();
            assertThat(thirdAcquired.getCount()).as("the third still waits").isOne();
            mayUnlock.countDown();
            assertThat(resultOf(waiter)).as("the waiter's hold is the grant").isEqualTo(token);
            thirdMayUnlock.countDown();
            assertThat(resultOf(third)).isGreaterThan(token);
        });
    }

    /**
     * Review finding: a grant that arrives while its attempt is in flight is not taken on the word of that attempt's
     * "not acquired". The reply may come from a run of the attempt that Lettuce sent again after a reconnect, behind
     * commands of the same owner sent again too that undid the grant (two reconnects within a command timeout). Here
     * the grant is undone behind the client's back while the attempt's reply is late: the waiter tries again.
     */
    @Test
    void aGrantThatArrivesBeforeItsAttemptsReplyIsTakenByTheNextAttemptOnly() throws Exception {
        String name = "grant-before-reply";
        String lockKey = "relock:{" + name + "}";
        RelockLock holder = newClient(builder -> builder.defaultLease(Duration.ofMinutes(3))).lock(name);
        holder.lock();
        onCallersClientThroughProxy(ClientOptions.create(), builder -> builder.defaultLease(Duration.ofMinutes(3))
                .commandTimeout(Duration.ofSeconds(5)), (proxy, callers, client) -> {
            // the command connection only (opened first): the attempt's reply comes 2 s late, the grant on time
            TcpProxy.Connection commands = proxy.connections().get(0);
            commands.replyLatency(Duration.ofSeconds(2));
            CountDownLatch acquired = new CountDownLatch(1);
            CountDownLatch mayUnlock = new CountDownLatch(1);
            CompletableFuture<Long> waiter = holdingInNewThread("waiter", client.lock(name), HANG, acquired,
                    mayUnlock);
            await().atMost(HANG).until(() -> offeredAttempt(name) > 0);
            holder.unlock();
            String owner = admin().hget(lockKey, "~writer");
            assertThat(owner).as("granted to the waiter's attempt").startsWith(client.clientId() + ":");
            // undone behind the client's back, as a withdraw run again did, and taken by another client
            admin().del(lockKey);
            RelockLock other = newClient(builder -> builder.defaultLease(Duration.ofMinutes(3))).lock(name);
            assertThat(other.tryLock()).isTrue();
            long otherToken = Long.parseLong(admin().hget(lockKey, "~token"));
            commands.replyLatency(Duration.ZERO); // for what the server sends from now on

            await("the waiter tried again and queued").atMost(HANG).until(() -> queue(name).contains(owner));
            assertThat(acquired.getCount()).as("not taken on the word of the late reply").isOne();
            other.unlock();
            assertThat(acquired.await(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
            assertThat(admin().hget(lockKey, "~writer")).isEqualTo(owner);
            mayUnlock.countDown();
            assertThat(resultOf(waiter)).isGreaterThan(otherToken);
        });
    }

    /**
     * Review finding: while the command connection is down, another connection of the same Lettuce client coming back
     * (the pub/sub one, or one of the caller's own) must not wake the waiter of an untold grant into an attempt that
     * is refused, which would end its wait with an error and leave the grant on it for the whole lease.
     */
    @Test
    void anotherConnectionComingBackFirstDoesNotWakeTheWaiterIntoAFailure() throws Exception {
        String name = "woken-too-early";
        ClientOptions rejecting = ClientOptions.builder()
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS).build();
        onCallersClientThroughProxy(rejecting, builder -> builder.defaultLease(Duration.ofMinutes(3)),
                (proxy, callers, client) -> {
            RelockLock lock = client.lock(name);
            CountDownLatch acquired = new CountDownLatch(1);
            CompletableFuture<Long> waiter = heldWithAWaiterOfTheSameClient(client, lock, acquired);
            String holderOwner = admin().hget("relock:{" + name + "}", "~writer");
            proxy.rejectNew(true); // the command connection cannot come back yet
            proxy.connections().get(0).loseNextReplyAndReset(); // the command connection; pub/sub stays up
            assertThatThrownBy(lock::unlock).isInstanceOf(RedisUnavailableException.class);
            assertThat(admin().hget("relock:{" + name + "}", "~writer")).as("granted in Redis to the waiter")
                    .startsWith(client.clientId() + ":").isNotEqualTo(holderOwner);
            // another connection of the same Lettuce client connects, straight to the server
            try (var other = callers.connect(io.lettuce.core.RedisURI.create(redis.uri()))) {
                assertThat(other.sync().ping()).isEqualTo("PONG");
                assertThat(acquired.getCount()).as("still waiting").isOne();
                assertThat(waiter).as("still waiting, not failed").isNotDone();
                proxy.rejectNew(false);
                assertThat(acquired.await(HANG.toMillis(), TimeUnit.MILLISECONDS)).as("the waiter took its grant")
                        .isTrue();
                assertThat(resultOf(waiter)).isPositive();
            }
        });
    }

    /**
     * Review finding: with a replication guard, releases and attempts go over the guard's own connection and waiters
     * take no grants, so a release lost on that connection can have granted nothing: its waiter must not be woken
     * into an attempt on the connection that is down, which would end its wait (two minutes left) with an error.
     */
    @Test
    void aReleaseLostOnTheGuardsConnectionDoesNotWakeTheWaiterIntoAFailure() throws Exception {
        String name = "guard-probe";
        try (RedisServer replica = RedisServer.start()) {
            replica.execute("REPLICAOF", redis.host(), Integer.toString(redis.port()));
            await().atMost(HANG).until(() -> admin().info("replication").contains("state=online"));
            try (TcpProxy proxy = TcpProxy.to(redis);
                    RelockClient client = RelockClient.builder().redisUri(proxy.uri())
                            .commandTimeout(Duration.ofMillis(500))
                            .replicationGuard(1, Duration.ofMillis(300))
                            .defaultLease(Duration.ofMinutes(3)).build()) {
                assertThat(proxy.connectionCount()).as("commands, pub/sub, the guard's").isEqualTo(3);
                RelockLock lock = client.lock(name);
                lock.lock();
                CompletableFuture<Boolean> waiter = inNewThread("waiter", () -> {
                    boolean got = lock.tryLock(2, TimeUnit.MINUTES);
                    if (got) {
                        lock.unlock();
                    }
                    return got;
                });
                await().atMost(HANG).until(() -> queue(name).size() == 1);
                // a barrier on the guard's connection: the waiter's attempt's reply is in once this returns
                RelockLock barrier = client.lock(name + "-barrier");
                assertThat(barrier.tryLock()).isTrue();
                barrier.unlock();

                proxy.connections().get(2).blackhole(); // the guard's connection only
                assertThatThrownBy(lock::unlock).isInstanceOf(RedisUnavailableException.class);
                assertThat(admin().hget("relock:{" + name + "}", "~writer")).as("the release never ran").isNotNull();
                await("the waiter still waits").during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(4))
                        .until(() -> !waiter.isDone());
                proxy.connections().get(2).heal();
            }
        }
    }

    /**
     * Holds {@code lock} (its release script cached) with a thread of the same client waiting behind, in the lock's line
     * (see LocalLineTest): the release names it its successor. The thread counts {@code acquired} down once it holds the
     * lock, then unlocks and returns its token.
     */
    private CompletableFuture<Long> heldWithAWaiterOfTheSameClient(RelockClient client, RelockLock lock,
            CountDownLatch acquired) {
        lock.lock();
        lock.unlock();
        lock.lock();
        long scriptsBefore = scriptCalls();
        // waits far longer than the tests do: its own last try at its deadline would take a grant too
        CompletableFuture<Long> waiter =
                holdingInNewThread("waiter", lock, Duration.ofMinutes(2), acquired, new CountDownLatch(0));
        LocalLineTest.awaitWaiting("waiter");
        // a command behind anything the waiter sent on the client's connection: in Redis once this returns
        client.ping();
        assertThat(scriptCalls() - scriptsBefore).as("in the line: the waiter sent nothing").isZero();
        return waiter;
    }

    /** Calls of {@code command} the fixture server has served so far (INFO commandstats). */
    private long calls(String command) {
        for (String line : admin().info("commandstats").split("\r\n")) {
            if (line.startsWith("cmdstat_" + command + ":")) {
                return Long.parseLong(line.replaceAll("^cmdstat_[a-z]+:calls=(\\d+),.*", "$1"));
            }
        }
        return 0;
    }

    /**
     * Review finding (issue 12, part 2): a waiter without a deadline whose attempt timed out withdraws, which
     * undoes a grant made for that attempt, and backs off; the grant's message, late, must not be taken during
     * the back-off. Replies to the waiter come 650 ms late (its command timeout is 500 ms), so every attempt
     * times out and is withdrawn; the 4th is followed by a 400 ms back-off, and the holder releases while that
     * attempt's reply is on its way: the grant is made, undone by the withdraw 500 ms after the attempt, and
     * its message arrives about 650 ms after the attempt. Before the fix the waiter returned holding nothing in
     * Redis, and another client got in beside it.
     */
    @Test
    void aGrantWhoseAttemptWasWithdrawnIsNeverTaken() throws Exception {
        String name = "withdrawn-grant";
        RelockLock holder = newClient().lock(name);
        holder.lock();
        try (TcpProxy proxy = TcpProxy.to(redis);
                RelockClient slow = RelockClient.builder().redisUri(proxy.uri())
                        .commandTimeout(Duration.ofMillis(500)).build()) {
            proxy.replyLatency(Duration.ofMillis(650));
            CompletableFuture<LockHandle> waited = slow.lock(name).acquireAsync().toCompletableFuture();
            // attempt ids count from 1 in each client, and this one sends nothing else
            await().atMost(HANG).pollInterval(Duration.ofMillis(1)).until(() -> offeredAttempt(name) >= 4);
            holder.unlock();
            await("the grant is made, then undone by the waiter's withdraw").atMost(HANG)
                    .until(() -> admin().hget("relock:{" + name + "}", "~writer") == null);
            // the grant's message is still on its way; the next attempt gets its reply in time
            proxy.replyLatency(Duration.ZERO);

            try (LockHandle taken = waited.get(HANG.toMillis(), TimeUnit.MILLISECONDS)) {
                assertThat(admin().hget("relock:{" + name + "}", "~writer")).as("the holder Redis knows")
                        .startsWith(slow.clientId() + ":");
                assertThat(newClient().lock(name).tryLock()).as("another client, beside the waiter").isFalse();
                assertThat(taken.fencingToken()).isEqualTo(Long.parseLong(admin().get("relock:{" + name + "}:fence")));
            }
        }
    }

    @Test
    void aGrantTheWaiterNeverTookIsUndoneByItsWithdraw() {
        String owner = NOBODY + ":1";
        RelockLock lock = heldWithScriptedWaiter("given-up", owner, "5000", "7");
        lock.unlock();
        assertThat(admin().hget("relock:{given-up}", "~writer")).as("granted on release").isEqualTo(owner);
        assertThat(lock.tryLock()).isFalse();

        assertThat(withdraw("given-up", owner, 7)).as("the grant was undone").isEqualTo(1L);
        assertThat(admin().exists("relock:{given-up}")).isZero();
        assertThat(lock.tryLock()).isTrue();
        lock.unlock();
    }

    @Test
    void anAttemptThatCrossesTheGrantTakesIt() {
        String owner = NOBODY + ":2";
        RelockLock lock = heldWithScriptedWaiter("crossed", owner, "5000", "8");
        lock.unlock();
        long token = Long.parseLong(admin().hget("relock:{crossed}", "~token"));

        assertThat(attempt("crossed", owner, "5000", "9")).as("taken once, not re-entered").containsExactly(1L, token, 1L);
        assertThat(admin().hget("relock:{crossed}", "~granted")).isNull();
        assertThat(withdraw("crossed", owner, 9)).as("a taken grant is the owner's hold").isZero();
        assertThat(admin().hget("relock:{crossed}", "~writer")).isEqualTo(owner);
        assertThat(release("crossed", owner, token)).isZero();
        assertThat(admin().exists("relock:{crossed}")).isZero();
    }

    /**
     * Chaos finding (a caller's Lettuce client sends again what was in flight when its connection dropped): a
     * withdraw sent before the attempt that a grant answers, and run again after the grant, leaves the grant, which
     * that attempt, run again too, then takes. Undoing it made the client take a grant Redis no longer had.
     */
    @Test
    void aWithdrawSentBeforeTheAttemptAGrantAnswersLeavesTheGrant() {
        String owner = NOBODY + ":5";
        RelockLock lock = heldWithScriptedWaiter("replayed-withdraw", owner, "5000", "13");
        lock.unlock();
        long token = Long.parseLong(admin().hget("relock:{replayed-withdraw}", "~token"));

        assertThat(withdraw("replayed-withdraw", owner, 12)).as("sent before attempt 13").isZero();
        assertThat(admin().hget("relock:{replayed-withdraw}", "~writer")).isEqualTo(owner);
        assertThat(attempt("replayed-withdraw", owner, "5000", "13")).as("attempt 13 again takes its grant")
                .containsExactly(1L, token, 1L);
        assertThat(release("replayed-withdraw", owner, token)).isZero();
    }

    /**
     * Review finding: an earlier attempt of the owner, sent again after a reconnect and run after the grant to its
     * later attempt, must not take that grant and clear its mark; the withdraw sent between the two would then undo
     * it, and the later attempt, run again, would only queue behind another waiter while its client took the grant.
     */
    @Test
    void anEarlierAttemptRunAgainAfterTheGrantLeavesItToTheAttemptItAnswers() {
        String owner = NOBODY + ":7";
        RelockLock lock = heldWithScriptedWaiter("replayed-attempt", owner, "5000", "32");
        RelockLock other = newClient().lock("replayed-attempt");
        lock.unlock();
        long token = Long.parseLong(admin().hget("relock:{replayed-attempt}", "~token"));

        assertThat(attempt("replayed-attempt", owner, "5000", "31").get(0)).as("attempt 31 again").isZero();
        assertThat(attempt("replayed-attempt", owner, "0", "").get(0)).as("a try without an id").isZero();
        assertThat(admin().hget("relock:{replayed-attempt}", "~granted")).isEqualTo("32");
        assertThat(withdrawUndoing("replayed-attempt", owner, 31)).as("its withdraw again").isZero();
        assertThat(other.tryLock()).isFalse();
        assertThat(attempt("replayed-attempt", owner, "5000", "32")).as("attempt 32 again takes its grant")
                .containsExactly(1L, token, 1L);
        assertThat(release("replayed-attempt", owner, token)).isZero();
    }

    /**
     * Chaos finding, the release's side: a release of an owner's earlier hold, run again after the owner was granted
     * the lock anew, leaves that grant (it names the earlier hold's fencing token).
     */
    @Test
    void aReleaseOfAnEarlierHoldLeavesTheOwnersLaterGrant() {
        String owner = NOBODY + ":6";
        List<Long> first = attempt("replayed-release", owner, "0", "");
        assertThat(first.get(0)).as("taken").isOne();
        assertThat(release("replayed-release", owner, first.get(1))).isZero();
        RelockLock lock = newClient().lock("replayed-release");
        lock.lock();
        assertThat(attempt("replayed-release", owner, "5000", "14").get(0)).as("queued").isZero();
        lock.unlock();
        long granted = Long.parseLong(admin().hget("relock:{replayed-release}", "~token"));
        assertThat(granted).isGreaterThan(first.get(1));

        assertThat(release("replayed-release", owner, first.get(1))).as("the earlier hold is gone").isEqualTo(-1L);
        assertThat(admin().hget("relock:{replayed-release}", "~writer")).isEqualTo(owner);
        assertThat(admin().hget("relock:{replayed-release}", "~token")).isEqualTo(Long.toString(granted));
        assertThat(release("replayed-release", owner, granted)).isZero();
    }

    @Test
    void aWaiterWhoseLastAttemptIsOlderThanTheGraceIsWokenNotGranted() {
        String owner = NOBODY + ":3";
        RelockLock lock = heldWithScriptedWaiter("stale", owner, "60000", "10");
        // as if its latest attempt ran a minute ago
        String offer = admin().hget("relock:{stale}:expiry", "~g|" + owner);
        long tried = Long.parseLong(offer.split(" ")[0]);
        admin().hset("relock:{stale}:expiry", "~g|" + owner, (tried - 60_000) + " 30000 10");
        lock.unlock();

        assertThat(admin().exists("relock:{stale}")).as("not granted").isZero();
        assertThat(queue("stale")).as("woken: still first in line").containsExactly(owner);
        assertThat(withdraw("stale", owner, 10)).isZero();
        assertThat(admin().hgetall("relock:{stale}:expiry")).isEmpty();
    }

    @Test
    void inspectionDoesNotCountGrantOffersAsWaiters() {
        RelockClient client = newClient();
        RelockLock lock = client.lock("offers");
        lock.lock();
        attempt("offers", NOBODY + ":4", "5000", "11");
        assertThat(client.inspect("offers").waiters()).isEqualTo(1);
        assertThat(withdraw("offers", NOBODY + ":4", 11)).isZero();
        lock.unlock();
    }

    /**
     * Waiters that give up in every way while grants are on their way (short timed waits,
     * cancelled asynchronous acquisitions, plain lock() in between): the lock stays exclusive and
     * keeps passing on, which it could not if a grant given up were left ownerless (it would sit
     * there for its lease), and nothing is left behind.
     */
    @Test
    void waitersGivingUpWhileGrantsAreOnTheirWayLeaveNoGrantBehind() throws Exception {
        givingUpWhileGrantsAreOnTheirWay(4, 1);
    }

    /** As above, with grants to waiters of the releaser's own client, which come back in the release's reply. */
    @Test
    void threadsOfOneClientGivingUpWhileGrantsAreInRepliesLeaveNoGrantBehind() throws Exception {
        givingUpWhileGrantsAreOnTheirWay(2, 3);
    }

    private void givingUpWhileGrantsAreOnTheirWay(int clients, int threadsPerClient) throws Exception {
        int rounds = 150;
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        List<CompletableFuture<Integer>> done = new ArrayList<>();
        RelockClient client = null;
        for (int t = 0; t < clients * threadsPerClient; t++) {
            if (t % threadsPerClient == 0) {
                // a grant left ownerless would hold the lock for at least 2/3 of this lease: longer than the bound below
                client = newClient(builder -> builder.defaultLease(Duration.ofMinutes(3)));
            }
            RelockLock lock = client.lock("giving-up");
            done.add(inNewThread("contender-" + t, () -> {
                int acquired = 0;
                for (int round = 0; round < rounds; round++) {
                    try (GivingUp.Taken taken = GivingUp.takeOrGiveUp(lock, round, 3)) {
                        if (taken != null) {
                            if (inside.incrementAndGet() != 1) {
                                overlaps.incrementAndGet();
                            }
                            inside.decrementAndGet();
                            acquired++;
                        }
                    }
                }
                return acquired;
            }));
        }
        int acquired = 0;
        for (CompletableFuture<Integer> contender : done) {
            acquired += contender.get(90, TimeUnit.SECONDS);
        }
        assertThat(overlaps).hasValue(0);
        assertThat(acquired).isGreaterThanOrEqualTo(clients * threadsPerClient * rounds / 3);
        await("every queue entry and grant offer gone").atMost(HANG)
                .until(() -> admin().exists("relock:{giving-up}:queue", "relock:{giving-up}:expiry") == 0);
    }

    /** The lock, held by a client of this test, with a scripted waiter queued behind. */
    private RelockLock heldWithScriptedWaiter(String name, String owner, String waitMillis, String attemptId) {
        RelockLock lock = newClient().lock(name);
        lock.lock();
        assertThat(attempt(name, owner, waitMillis, attemptId).get(0)).as("queued").isZero();
        return lock;
    }

    private List<Long> attempt(String name, String owner, String waitMillis, String attemptId) {
        return new LockScripts(admin()).acquire(name, owner, waitMillis, attemptId);
    }

    /** withdraw.lua for {@code owner}, sent when {@code lastAttempt} was the highest attempt id handed out. */
    private long withdraw(String name, String owner, long lastAttempt) {
        return new LockScripts(admin()).withdraw(name, owner, "w", false, lastAttempt);
    }

    /** As {@link #withdraw}, also undoing a fresh hold (after a lost reply). */
    private long withdrawUndoing(String name, String owner, long lastAttempt) {
        return new LockScripts(admin()).withdraw(name, owner, "w", true, lastAttempt);
    }

    private long release(String name, String owner, long token) {
        return new LockScripts(admin()).release(name, owner, token);
    }
}
