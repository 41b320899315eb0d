package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.relock.testredis.TcpProxy;
import io.lettuce.core.ClientOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Grant on release to readers: a write release (or the last read release) that frees the lock while readers that
 * tried recently wait at the head of its queue makes each of them a holder of the read lock at once, and their
 * wake-up messages carry the grants, so they return without attempts of their own. As for a writer's grant
 * ({@link GrantOnReleaseTest}): a grant its reader gave up before taking is undone by the reader's withdraw, an
 * attempt that crosses it takes it, an earlier attempt or withdraw run again after it leaves it, and a reader whose
 * last attempt is too old is woken instead.
 *
 * <p>The scripted readers here use a client id nobody subscribes to, so no client takes their grants: that is the
 * state of a reader that gave up while the grant was on its way.
 */
@Tag("redis")
class ReaderGrantTest extends OneServerTestBase {

    private static final String NOBODY = LockScripts.NOBODY;

    @Test
    void readersWaitingBehindAWriterHoldOnItsReleaseWithoutAttemptsOfTheirOwn() throws Exception {
        String name = "granted-readers";
        // long leases: no renewal pass runs while the scripts are counted; a long grace (the releaser's): however
        // slowly the readers' threads start, their offers are fresh at the release
        RelockLock writer = newClient(builder -> builder.defaultLease(Duration.ofMinutes(3))
                .handoffGrace(Duration.ofSeconds(30))).readWriteLock(name).writeLock();
        // once before, so the release below runs from the script cache: one EVALSHA, no NOSCRIPT + EVAL
        writer.lock();
        writer.unlock();
        writer.lock();
        long writersToken = writer.fencingToken().orElseThrow();
        int readers = 3;
        CountDownLatch acquired = new CountDownLatch(readers);
        CountDownLatch mayUnlock = new CountDownLatch(1);
        List<CompletableFuture<Long>> reading = new ArrayList<>();
        for (int i = 0; i < readers; i++) {
            RelockLock reader = newClient(builder -> builder.defaultLease(Duration.ofMinutes(3)))
                    .readWriteLock(name).readLock();
            reading.add(holdingInNewThread("reader-" + i, reader, HANG, acquired, mayUnlock));
        }
        await().atMost(HANG).until(() -> queue(name).size() == readers);
        long scriptsBefore = scriptCalls();

        writer.unlock();
        assertThat(acquired.await(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        assertThat(scriptCalls() - scriptsBefore).as("the release only: no reader sent an attempt").isEqualTo(1);
        assertThat(queue(name)).isEmpty();
        assertThat(admin().hkeys("relock:{" + name + "}")).as("each grant marked with the attempt it answers")
                .filteredOn(field -> field.startsWith("g|")).hasSize(readers);
        assertThat(admin().pttl("relock:{" + name + "}")).isGreaterThan(Duration.ofMinutes(2).toMillis());
        long fence = Long.parseLong(admin().get("relock:{" + name + "}:fence"));
        assertThat(writer.tryLock()).as("a writer beside the granted readers").isFalse();

        mayUnlock.countDown();
        Set<Long> tokens = new HashSet<>();
        for (CompletableFuture<Long> reader : reading) {
            tokens.add(resultOf(reader));
        }
        assertThat(tokens).as("a token of its own for each reader, above the writer's").hasSize(readers)
                .allSatisfy(token -> assertThat(token).isGreaterThan(writersToken));
        // the release drew the readers' tokens one above the other and wrote the fence once: it ends at the highest
        assertThat(fence).as("the fence after the grants").isEqualTo(Collections.max(tokens));
    }

    /**
     * As {@link GrantOnReleaseTest#aWithdrawSentAgainAfterAReconnectLeavesTheGrantToTheAttemptAfterIt}, for a reader on
     * a caller's Lettuce client that sends again what was in flight at a reconnect: its first attempt timed out, its
     * withdraw and second attempt got no reply, and a release granted the read lock to the second attempt. Sent again,
     * the withdraw leaves that grant and the attempt takes it; Redis and the client agree that the reader holds, and a
     * writer stays out.
     */
    @Test
    void aReadWithdrawSentAgainAfterAReconnectLeavesTheGrantToTheAttemptAfterIt() throws Exception {
        String name = "read-withdraw-sent-again";
        String lockKey = "relock:{" + name + "}";
        // a long grace (the releaser's): the second attempt's offer is still fresh at the release, however slowly the
        // writer behind it starts
        RelockLock holder = newClient(builder -> builder.defaultLease(Duration.ofMinutes(3))
                .handoffGrace(Duration.ofSeconds(30))).readWriteLock(name).writeLock();
        holder.lock();
        onCallersClientThroughProxy(ClientOptions.create(), builder -> builder.defaultLease(Duration.ofMinutes(3))
                .commandTimeout(Duration.ofSeconds(2)), (proxy, callers, client) -> {
            RelockLock reader = client.readWriteLock(name).readLock();
            // the command connection only (opened first): commands reach Redis, their replies come too late
            TcpProxy.Connection commands = proxy.connections().get(0);
            commands.replyLatency(Duration.ofMinutes(1));
            CountDownLatch acquired = new CountDownLatch(1);
            CountDownLatch mayUnlock = new CountDownLatch(1);
            CompletableFuture<Long> waiter = inNewThread("reader", () -> {
                reader.lock(); // waits through Redis being unavailable, trying again
                acquired.countDown();
                assertThat(mayUnlock.await(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
                long token = reader.fencingToken().orElseThrow();
                reader.unlock();
                return token;
            });
            await().atMost(HANG).until(() -> offeredAttempt(name) > 0);
            long first = offeredAttempt(name);
            // the first attempt timed out (2 s), its withdraw ran and the next attempt queued again
            await().atMost(HANG).until(() -> offeredAttempt(name) > first);
            // a writer waits behind it: a reader's attempt that found no grant would queue behind that writer
            CountDownLatch writerAcquired = new CountDownLatch(1);
            CountDownLatch writerMayUnlock = new CountDownLatch(1);
            CompletableFuture<Long> writer = holdingInNewThread("writer",
                    newClient().readWriteLock(name).writeLock(), HANG, writerAcquired, writerMayUnlock);
            await().atMost(HANG).until(() -> queue(name).size() == 2);
            String member = queueMemberOf(client, lockKey);
            holder.unlock();
            assertThat(admin().hget(lockKey, member)).as("granted to the second attempt").isEqualTo("1");
            // before the withdraw's own command timeout: Lettuce sends the withdraw and the attempt again
            commands.reset();

            assertThat(acquired.await(HANG.toMillis(), TimeUnit.MILLISECONDS)).as("the reader took the lock").isTrue();
            assertThat(admin().hget(lockKey, member)).as("Redis agrees").isEqualTo("1");
            long token = Long.parseLong(admin().hget(lockKey, "t|" + member.substring(2)));
            assertThat(holder.tryLock()).isFalse();
            assertThat(writerAcquired.getCount()).as("the writer still waits").isOne();
            mayUnlock.countDown();
            assertThat(resultOf(waiter)).as("the reader's hold is the grant").isEqualTo(token);
            writerMayUnlock.countDown();
            assertThat(resultOf(writer)).isGreaterThan(token);
        });
    }

    /**
     * As {@link GrantOnReleaseTest#aGrantThatArrivesBeforeItsAttemptsReplyIsTakenByTheNextAttemptOnly}, for a reader: a
     * grant that arrives while its attempt's reply is late is not taken on the word of that reply. Here the grant is
     * undone behind the client's back and a writer takes the lock: the reader tries again and waits for that writer.
     */
    @Test
    void aReadGrantThatArrivesBeforeItsAttemptsReplyIsTakenByTheNextAttemptOnly() throws Exception {
        String name = "read-grant-before-reply";
        String lockKey = "relock:{" + name + "}";
        RelockLock holder = newClient(builder -> builder.defaultLease(Duration.ofMinutes(3)))
                .readWriteLock(name).writeLock();
        holder.lock();
        onCallersClientThroughProxy(ClientOptions.create(), builder -> builder.defaultLease(Duration.ofMinutes(3))
                .commandTimeout(Duration.ofSeconds(5)), (proxy, callers, client) -> {
            // the command connection only (opened first): the attempt's reply comes 2 s late, the grant on time
            TcpProxy.Connection commands = proxy.connections().get(0);
            commands.replyLatency(Duration.ofSeconds(2));
            CountDownLatch acquired = new CountDownLatch(1);
            CountDownLatch mayUnlock = new CountDownLatch(1);
            CompletableFuture<Long> waiter = holdingInNewThread("reader", client.readWriteLock(name).readLock(), HANG,
                    acquired, mayUnlock);
            await().atMost(HANG).until(() -> offeredAttempt(name) > 0);
            String member = queueMemberOf(client, lockKey);
            holder.unlock();
            assertThat(admin().hget(lockKey, member)).as("granted to the reader's attempt").isEqualTo("1");
            // undone behind the client's back, as a withdraw run again would, and taken by a writer of another client
            admin().del(lockKey, lockKey + ":readers");
            RelockLock other = newClient(builder -> builder.defaultLease(Duration.ofMinutes(3)))
                    .readWriteLock(name).writeLock();
            assertThat(other.tryLock()).isTrue();
            long otherToken = Long.parseLong(admin().hget(lockKey, "~token"));
            commands.replyLatency(Duration.ZERO); // for what the server sends from now on

            await("the reader tried again and queued").atMost(HANG).until(() -> queue(name).contains(member));
            assertThat(acquired.getCount()).as("not taken on the word of the late reply").isOne();
            other.unlock();
            assertThat(acquired.await(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
            assertThat(admin().hget(lockKey, member)).isEqualTo("1");
            mayUnlock.countDown();
            assertThat(resultOf(waiter)).isGreaterThan(otherToken);
        });
    }

    /** The queue member ('r|' + owner) of the one reader of {@code client} that waits for the lock at {@code lockKey}. */
    private String queueMemberOf(RelockClient client, String lockKey) {
        List<String> mine = admin().zrange(lockKey + ":queue", 0, -1).stream()
                .filter(member -> member.startsWith("r|" + client.clientId() + ":")).toList();
        assertThat(mine).hasSize(1);
        return mine.get(0);
    }

    @Test
    void aReadGrantTheReaderNeverTookIsUndoneByItsWithdraw() {
        String owner = NOBODY + ":1";
        RelockLock writer = writeHeldWithScriptedReader("read-given-up", owner, "7");
        writer.unlock();
        assertThat(admin().hget("relock:{read-given-up}", "r|" + owner)).as("granted on release").isEqualTo("1");
        assertThat(writer.tryLock()).isFalse();

        assertThat(withdraw("read-given-up", owner, 7)).as("the grant was undone").isEqualTo(1L);
        assertThat(admin().exists("relock:{read-given-up}", "relock:{read-given-up}:readers")).isZero();
        assertThat(writer.tryLock()).isTrue();
        writer.unlock();
    }

    @Test
    void aReadAttemptThatCrossesTheGrantTakesIt() {
        String owner = NOBODY + ":2";
        RelockLock writer = writeHeldWithScriptedReader("read-crossed", owner, "8");
        writer.unlock();
        long token = Long.parseLong(admin().hget("relock:{read-crossed}", "t|" + owner));

        assertThat(attempt("read-crossed", owner, "9")).as("taken once, not re-entered").containsExactly(1L, token, 1L);
        assertThat(admin().hget("relock:{read-crossed}", "g|" + owner)).isNull();
        assertThat(withdraw("read-crossed", owner, 9)).as("a taken grant is the owner's hold").isZero();
        assertThat(release("read-crossed", owner, token)).isZero();
        assertThat(admin().exists("relock:{read-crossed}", "relock:{read-crossed}:readers")).isZero();
    }

    /**
     * As for a writer: a withdraw sent before the attempt that a grant answers, run again after the grant (a Lettuce
     * client sends again what was in flight when its connection dropped), leaves the grant; an earlier attempt run
     * again neither takes it nor clears its mark, so that withdraw cannot undo it either.
     */
    @Test
    void anEarlierAttemptOrWithdrawRunAgainAfterTheGrantLeavesItToTheAttemptItAnswers() {
        String owner = NOBODY + ":3";
        RelockLock writer = writeHeldWithScriptedReader("read-replayed", owner, "32");
        writer.unlock();
        long token = Long.parseLong(admin().hget("relock:{read-replayed}", "t|" + owner));

        assertThat(attempt("read-replayed", owner, "31").get(0)).as("attempt 31 again").isZero();
        assertThat(attempt("read-replayed", owner, "").get(0)).as("a try without an id").isZero();
        assertThat(admin().hget("relock:{read-replayed}", "g|" + owner)).isEqualTo("32");
        assertThat(withdrawUndoing("read-replayed", owner, 31)).as("its withdraw again").isZero();
        assertThat(writer.tryLock()).isFalse();
        assertThat(attempt("read-replayed", owner, "32")).as("attempt 32 again takes its grant")
                .containsExactly(1L, token, 1L);
        assertThat(release("read-replayed", owner, token)).isZero();
    }

    /** A read release of an owner's earlier hold, run again after the owner was granted the lock anew, leaves that grant. */
    @Test
    void aReadReleaseOfAnEarlierHoldLeavesTheOwnersLaterGrant() {
        String owner = NOBODY + ":4";
        List<Long> first = attempt("read-release-replayed", owner, "");
        assertThat(first.get(0)).as("taken").isOne();
        assertThat(release("read-release-replayed", owner, first.get(1))).isZero();
        RelockLock writer = writeHeldWithScriptedReader("read-release-replayed", owner, "14");
        writer.unlock();
        long granted = Long.parseLong(admin().hget("relock:{read-release-replayed}", "t|" + owner));
        assertThat(granted).isGreaterThan(first.get(1));

        assertThat(release("read-release-replayed", owner, first.get(1))).as("the earlier hold is gone").isEqualTo(-1L);
        assertThat(admin().hget("relock:{read-release-replayed}", "r|" + owner)).isEqualTo("1");
        assertThat(writer.tryLock()).isFalse();
        assertThat(release("read-release-replayed", owner, granted)).isZero();
        assertThat(writer.tryLock()).isTrue();
        writer.unlock();
    }

    /** As a read release: a release-after of an owner's earlier read hold, run again after the owner was granted anew, leaves that grant. */
    @Test
    void aReleaseAfterOfAnEarlierReadHoldLeavesTheOwnersLaterGrant() {
        String name = "read-release-after-replayed";
        String owner = NOBODY + ":12";
        List<Long> first = attempt(name, owner, "");
        assertThat(release(name, owner, first.get(1))).isZero();
        RelockLock writer = writeHeldWithScriptedReader(name, owner, "60");
        writer.unlock();
        long granted = Long.parseLong(admin().hget("relock:{" + name + "}", "t|" + owner));

        assertThat(new LockScripts(admin()).releaseAfter(name, owner, "r", 5, first.get(1)))
                .as("the earlier hold is gone").isEqualTo(-1L);
        assertThat(admin().zscore("relock:{" + name + "}:readers", owner)).as("the grant's lease, not 5 ms")
                .isGreaterThan((double) System.currentTimeMillis() + 20_000);
        assertThat(release(name, owner, granted)).isZero();
    }

    /**
     * A fresh read acquisition of an owner whose earlier read hold is still there (released with a delay) draws a token
     * of its own, greater than that hold's; a release-after of the earlier hold, sent again, leaves it.
     */
    @Test
    void aFreshReadAcquisitionDuringTheOwnersDelayedReleaseGetsANewToken() {
        String name = "read-again-in-delay";
        String owner = NOBODY + ":15";
        LockScripts scripts = new LockScripts(admin());
        List<Long> first = attempt(name, owner, "");
        assertThat(scripts.releaseAfter(name, owner, "r", 60_000, first.get(1))).isZero();

        List<Long> again = attempt(name, owner, "");
        assertThat(again.get(0)).isOne();
        assertThat(again.get(1)).isGreaterThan(first.get(1));
        assertThat(again.get(2)).as("held once").isOne();
        assertThat(scripts.releaseAfter(name, owner, "r", 5, first.get(1))).as("the earlier hold's, again").isEqualTo(-1L);
        assertThat(release(name, owner, again.get(1))).isZero();
    }

    /**
     * A hold a grant made, released with a delay, is no longer an untaken grant: a withdraw of its owner's next
     * acquisition (one that failed on an error reply, say) leaves it for the delay.
     */
    @Test
    void aGrantReleasedAfterADelayIsNotUndoneByTheOwnersNextWithdraw() {
        String name = "granted-then-delayed";
        String reader = NOBODY + ":13";
        String writer = NOBODY + ":14";
        LockScripts scripts = new LockScripts(admin());
        RelockLock holder = writeHeldWithScriptedReader(name, reader, "70");
        holder.unlock();
        long token = Long.parseLong(admin().hget("relock:{" + name + "}", "t|" + reader));
        assertThat(scripts.releaseAfter(name, reader, "r", 60_000, token)).isZero();
        assertThat(scripts.withdraw(name, reader, "r", false, 71)).as("a later acquisition's withdraw").isZero();
        assertThat(admin().hget("relock:{" + name + "}", "r|" + reader)).as("still held for the delay").isEqualTo("1");
        assertThat(scripts.releaseRead(name, reader, token)).isZero();

        // the same for a writer granted on release
        RelockLock reading = newClient().readWriteLock(name).readLock();
        reading.lock();
        assertThat(scripts.acquire(name, writer, "5000", "72").get(0)).as("queued").isZero();
        reading.unlock();
        long writersToken = Long.parseLong(admin().hget("relock:{" + name + "}", "~token"));
        assertThat(scripts.releaseAfter(name, writer, "w", 60_000, writersToken)).isZero();
        assertThat(scripts.withdraw(name, writer, "w", false, 73)).as("a later acquisition's withdraw").isZero();
        assertThat(admin().hget("relock:{" + name + "}", "~writer")).as("still held for the delay").isEqualTo(writer);
        assertThat(scripts.release(name, writer, writersToken)).isZero();
    }

    @Test
    void aReaderWhoseLastAttemptIsOlderThanTheGraceIsWokenNotGranted() {
        String owner = NOBODY + ":5";
        RelockLock writer = writeHeldWithScriptedReader("read-stale", owner, "10");
        // as if its latest attempt ran a minute ago
        String offer = admin().hget("relock:{read-stale}:expiry", "~g|r|" + owner);
        long tried = Long.parseLong(offer.split(" ")[0]);
        admin().hset("relock:{read-stale}:expiry", "~g|r|" + owner, (tried - 60_000) + " 30000 10");
        writer.unlock();

        assertThat(admin().exists("relock:{read-stale}", "relock:{read-stale}:readers")).as("not granted").isZero();
        assertThat(queue("read-stale")).as("woken: still first in line").containsExactly("r|" + owner);
        assertThat(withdraw("read-stale", owner, 10)).isZero();
        assertThat(admin().hgetall("relock:{read-stale}:expiry")).isEmpty();
    }

    /**
     * The last reader's release grants the readers at the head too: here they queued behind a writer that died (its
     * queue entry has lapsed), so the release finds them first.
     */
    @Test
    void theLastReadReleaseGrantsTheReadersBehindADeadWriter() {
        String name = "read-after-dead-writer";
        String lockKey = "relock:{" + name + "}";
        RelockLock reader = newClient().readWriteLock(name).readLock();
        reader.lock();
        String deadWriter = NOBODY + ":9";
        String behind = NOBODY + ":10";
        List<Long> queued = new LockScripts(admin()).acquire(name, deadWriter, "5000", "40");
        assertThat(queued.get(0)).as("a writer queued").isZero();
        assertThat(attempt(name, behind, "41").get(0)).as("a reader behind it").isZero();
        // the writer's entry lapsed: it died
        admin().hset(lockKey + ":expiry", deadWriter, "1");

        reader.unlock();
        assertThat(admin().hget(lockKey, "r|" + behind)).as("granted").isEqualTo("1");
        assertThat(admin().hget(lockKey, "g|" + behind)).isEqualTo("41");
        assertThat(queue(name)).isEmpty();
        assertThat(withdraw(name, behind, 41)).as("the untaken grant undone").isEqualTo(1L);
        assertThat(admin().exists(lockKey, lockKey + ":readers")).isZero();
    }

    /** A writer that took the read lock too (a downgrade) grants the readers waiting behind it when it releases the write lock. */
    @Test
    void aDowngradingWritersReleaseGrantsTheReadersBehindIt() {
        String name = "read-after-downgrade";
        String lockKey = "relock:{" + name + "}";
        RelockReadWriteLock lock = newClient().readWriteLock(name);
        lock.writeLock().lock();
        lock.readLock().lock();
        String behind = NOBODY + ":11";
        assertThat(attempt(name, behind, "50").get(0)).as("queued behind the writer").isZero();

        lock.writeLock().unlock();
        assertThat(admin().hget(lockKey, "r|" + behind)).as("granted beside the downgraded reader").isEqualTo("1");
        assertThat(lock.readLock().isHeldByCurrentThread()).isTrue();
        lock.readLock().unlock();
        assertThat(withdraw(name, behind, 50)).as("the untaken grant undone").isEqualTo(1L);
        assertThat(admin().exists(lockKey, lockKey + ":readers")).isZero();
    }

    /** Only the readers before the first writer in the queue are granted; the writer behind them is next. */
    @Test
    void theReadersAfterTheFirstWaitingWriterAreNotGranted() {
        String first = NOBODY + ":6";
        String writing = NOBODY + ":7";
        String behind = NOBODY + ":8";
        RelockLock writer = writeHeldWithScriptedReader("read-then-writer", first, "20");
        List<Long> queued = new LockScripts(admin()).acquire("read-then-writer", writing, "5000", "21");
        assertThat(queued.get(0)).as("a writer queued").isZero();
        assertThat(attempt("read-then-writer", behind, "22").get(0)).as("a reader behind it").isZero();
        writer.unlock();

        assertThat(admin().hget("relock:{read-then-writer}", "r|" + first)).as("granted").isEqualTo("1");
        assertThat(admin().hget("relock:{read-then-writer}", "r|" + behind)).as("not granted").isNull();
        assertThat(queue("read-then-writer")).containsExactly(writing, "r|" + behind);
        assertThat(withdraw("read-then-writer", behind, 22)).isZero();
        long writerUndone = new LockScripts(admin()).withdraw("read-then-writer", writing, "w", false, 21);
        assertThat(writerUndone).isZero();
        assertThat(withdraw("read-then-writer", first, 20)).as("the untaken grant undone").isEqualTo(1L);
        assertThat(admin().exists("relock:{read-then-writer}", "relock:{read-then-writer}:readers")).isZero();
    }

    /**
     * Readers and writers of several clients that give up in every way while grants are on their way (short timed
     * waits, cancelled asynchronous acquisitions, plain lock() in between): no writer is ever inside with anybody,
     * the lock keeps passing on, which it could not if a read grant given up were left ownerless (it would keep
     * writers out for its lease), and nothing is left behind.
     */
    @Test
    void readersAndWritersGivingUpWhileGrantsAreOnTheirWayKeepExclusionAndLeaveNothingBehind() throws Exception {
        String name = "readers-giving-up";
        int rounds = 150;
        AtomicInteger writing = new AtomicInteger();
        AtomicInteger reading = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        List<CompletableFuture<Integer>> done = new ArrayList<>();
        List<String> contenders = new ArrayList<>();
        for (int t = 0; t < 6; t++) {
            // a grant left ownerless would hold the lock for at least 2/3 of this lease: longer than the bound below
            RelockClient client = newClient(builder -> builder.defaultLease(Duration.ofMinutes(3)));
            RelockReadWriteLock lock = client.readWriteLock(name);
            boolean writer = t % 3 == 0;
            contenders.add("contender-" + t + ": " + client.clientId());
            done.add(inNewThread("contender-" + t, () -> {
                int acquired = 0;
                for (int round = 0; round < rounds; round++) {
                    try (GivingUp.Taken taken = GivingUp.takeOrGiveUp(writer ? lock.writeLock() : lock.readLock(),
                            round, 3)) {
                        if (taken != null) {
                            // inside for up to 0.2 ms: long enough for a holder beside it to show
                            long inside = ThreadLocalRandom.current().nextLong(200_000);
                            if (writer) {
                                if (writing.incrementAndGet() != 1 || reading.get() != 0) {
                                    overlaps.incrementAndGet();
                                }
                                LockSupport.parkNanos(inside);
                                writing.decrementAndGet();
                            } else {
                                reading.incrementAndGet();
                                if (writing.get() != 0) {
                                    overlaps.incrementAndGet();
                                }
                                LockSupport.parkNanos(inside);
                                reading.decrementAndGet();
                            }
                            acquired++;
                        }
                    }
                }
                return acquired;
            }));
        }
        int acquired = 0;
        long bound = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        for (CompletableFuture<Integer> contender : done) {
            try {
                acquired += contender.get(Math.max(0, bound - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                // an ownerless grant shows as a read hold ('r|', 't|' and 'g|' fields, a lease in the readers zset)
                // of an owner none of whose threads holds; a writer left in its client's line behind a hold that
                // ended (LocalLinesTest) as a lock that nobody holds or waits for in Redis; a slow run as a queue
                // that still moves
                throw new AssertionError("contenders still running after 90 s (" + contenders + "); in Redis now: "
                        + lockState(name), e);
            }
        }
        assertThat(overlaps).hasValue(0);
        assertThat(acquired).isGreaterThanOrEqualTo(6 * rounds / 3);
        await("every hold, queue entry and grant offer gone").atMost(HANG).until(() -> admin().exists(
                "relock:{" + name + "}", "relock:{" + name + "}:readers", "relock:{" + name + "}:queue",
                "relock:{" + name + "}:expiry") == 0);
    }

    /** What Redis holds for lock {@code name}: its keys with their contents and times to live, and the server's time. */
    private String lockState(String name) {
        String lock = "relock:{" + name + "}";
        return "time " + admin().time() + "; " + lock + " " + admin().hgetall(lock) + " pttl " + admin().pttl(lock)
                + "; readers " + admin().zrangeWithScores(lock + ":readers", 0, -1)
                + "; queue " + admin().zrangeWithScores(lock + ":queue", 0, -1)
                + "; expiry " + admin().hgetall(lock + ":expiry") + " pttl " + admin().pttl(lock + ":expiry");
    }

    /** The write lock, held by a client of this test, with a scripted reader queued behind it that takes grants. */
    private RelockLock writeHeldWithScriptedReader(String name, String owner, String attemptId) {
        RelockLock writer = newClient().readWriteLock(name).writeLock();
        writer.lock();
        assertThat(attempt(name, owner, attemptId).get(0)).as("queued").isZero();
        return writer;
    }

    /** acquire-read.lua for a fresh reader that waits 5 s, with attempt id {@code attemptId} ('' for none). */
    private List<Long> attempt(String name, String owner, String attemptId) {
        return new LockScripts(admin()).acquireRead(name, owner, "5000", attemptId);
    }

    /** withdraw.lua for reader {@code owner}, sent when {@code lastAttempt} was the highest attempt id handed out. */
    private long withdraw(String name, String owner, long lastAttempt) {
        return new LockScripts(admin()).withdraw(name, owner, "r", false, lastAttempt);
    }

    /** As {@link #withdraw}, also undoing a fresh hold (after a lost reply). */
    private long withdrawUndoing(String name, String owner, long lastAttempt) {
        return new LockScripts(admin()).withdraw(name, owner, "r", true, lastAttempt);
    }

    private long release(String name, String owner, long token) {
        return new LockScripts(admin()).releaseRead(name, owner, token);
    }
}
