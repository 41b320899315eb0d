package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.relock.internal.script.LuaScript;
import io.lettuce.core.ScriptOutputType;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
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
class GrantOnReleaseTest extends OneServerTestBase {

    // a client id no client has: its messages go unheard
    private static final String NOBODY = "feedface";
    private static final String GRACE = "1000";
    private static final String CHANNEL_PREFIX = "relock:wake:";

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
        CompletableFuture<Long> waiter = inNewThread("waiter", () -> {
            assertThat(waiting.tryLock(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
            acquired.countDown();
            assertThat(mayUnlock.await(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
            // inspects the lock in Redis: only after the scripts were counted
            long token = waiting.fencingToken().orElseThrow();
            waiting.unlock();
            return token;
        });
        await().atMost(HANG).until(() -> queue("granted").size() == 1);
        long scriptsBefore = scriptCalls();

        held.unlock();
        assertThat(acquired.await(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        assertThat(scriptCalls() - scriptsBefore).as("the release only: the waiter sent no attempt").isEqualTo(1);
        assertThat(admin().hget("relock:{granted}", "~granted")).as("granted, not yet confirmed")
                .isNotNull().isEqualTo(admin().hget("relock:{granted}", "~writer"));
        assertThat(admin().pttl("relock:{granted}")).isGreaterThan(Duration.ofMinutes(2).toMillis());
        assertThat(queue("granted")).isEmpty();

        mayUnlock.countDown();
        assertThat(resultOf(waiter)).isGreaterThan(firstToken);
        assertThat(held.isLocked()).isFalse();
    }

    @Test
    void aGrantTheWaiterNeverTookIsUndoneByItsWithdraw() {
        String owner = NOBODY + ":1";
        RelockLock lock = heldWithScriptedWaiter("given-up", owner, "5000", "7");
        lock.unlock();
        assertThat(admin().hget("relock:{given-up}", "~writer")).as("granted on release").isEqualTo(owner);
        assertThat(lock.tryLock()).isFalse();

        assertThat(withdraw("given-up", owner)).as("the grant was undone").isEqualTo(1L);
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
        assertThat(withdraw("crossed", owner)).as("a taken grant is the owner's hold").isZero();
        assertThat(admin().hget("relock:{crossed}", "~writer")).isEqualTo(owner);
        assertThat(release("crossed", owner)).isZero();
        assertThat(admin().exists("relock:{crossed}")).isZero();
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
        assertThat(withdraw("stale", owner)).isZero();
        assertThat(admin().hgetall("relock:{stale}:expiry")).isEmpty();
    }

    @Test
    void inspectionDoesNotCountGrantOffersAsWaiters() {
        RelockClient client = newClient();
        RelockLock lock = client.lock("offers");
        lock.lock();
        attempt("offers", NOBODY + ":4", "5000", "11");
        assertThat(client.inspect("offers").waiters()).isEqualTo(1);
        assertThat(withdraw("offers", NOBODY + ":4")).isZero();
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
        int clients = 4;
        int rounds = 150;
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        List<CompletableFuture<Integer>> done = new ArrayList<>();
        for (int c = 0; c < clients; c++) {
            // a grant left ownerless would hold the lock for at least 2/3 of this lease: longer than the bound below
            RelockLock lock = newClient(builder -> builder.defaultLease(Duration.ofMinutes(3))).lock("giving-up");
            done.add(inNewThread("contender-" + c, () -> {
                ThreadLocalRandom random = ThreadLocalRandom.current();
                int acquired = 0;
                for (int round = 0; round < rounds; round++) {
                    LockHandle handle = null;
                    boolean held;
                    switch (round % 3) {
                        case 0 -> {
                            lock.lock();
                            held = true;
                        }
                        case 1 -> held = lock.tryLock(random.nextInt(3), TimeUnit.MILLISECONDS);
                        default -> {
                            CompletableFuture<Optional<LockHandle>> pending =
                                    lock.tryAcquireAsync(Duration.ofMillis(50)).toCompletableFuture();
                            try {
                                handle = pending.get(random.nextInt(3), TimeUnit.MILLISECONDS).orElse(null);
                            } catch (TimeoutException e) {
                                if (!pending.cancel(false)) {
                                    // completed just now: the handle is ours to close
                                    handle = pending.join().orElse(null);
                                }
                            }
                            held = handle != null;
                        }
                    }
                    if (held) {
                        if (inside.incrementAndGet() != 1) {
                            overlaps.incrementAndGet();
                        }
                        inside.decrementAndGet();
                        acquired++;
                        if (handle != null) {
                            handle.close();
                        } else {
                            lock.unlock();
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
        assertThat(acquired).isGreaterThanOrEqualTo(clients * rounds / 3);
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
        return admin().eval(LuaScript.ACQUIRE.body(), ScriptOutputType.MULTI, keys(name),
                owner, "30000", "0", waitMillis, GRACE, CHANNEL_PREFIX, attemptId);
    }

    private long withdraw(String name, String owner) {
        return admin().eval(LuaScript.WITHDRAW.body(), ScriptOutputType.INTEGER, keys(name),
                owner, "w", "0", GRACE, CHANNEL_PREFIX);
    }

    private long release(String name, String owner) {
        return admin().eval(LuaScript.RELEASE.body(), ScriptOutputType.INTEGER, keys(name),
                owner, "all", GRACE, CHANNEL_PREFIX);
    }

    private static String[] keys(String name) {
        String base = "relock:{" + name + "}";
        return new String[] {base, base + ":fence", base + ":queue", base + ":expiry", base + ":readers"};
    }
}
