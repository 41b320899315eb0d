package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.relock.internal.script.SharedScripts;
import io.lettuce.core.ScriptOutputType;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * What naming a holder's thread in its client's identity record from its acquisition on costs, counted on this class's
 * own server (INFO commandstats, which counts a script's own calls too): the lock scripts go by EVALSHA, the record's
 * writes by EVAL. And that an addition to the record never makes one without a time to live. Whether the thread shows
 * right after the acquisition is the contract's (OperatorViewContract), on every deployment.
 */
@Tag("redis")
class HolderNamingTest extends OneServerTestBase {

    private static final int PAIRS = 1_000;
    // RecordWrites' least time between two additions to a record
    private static final long ADDITION_SPACING_MILLIS = 100;
    // at most this many record writes besides the additions: a lease keeper pass's whole write, which a loop on a slow
    // machine may meet, and the addition of a hold taken just before the count began
    private static final long FEW = 3;

    @Test
    void aThreadLockingInALoopAddsAtMostAHandfulOfRecordWrites() {
        RelockLock lock = newClient().lock("looped");
        Map<String, Long> spent = spentOn(lock, () -> {
            for (int i = 0; i < PAIRS; i++) {
                lock.lock();
                lock.unlock();
            }
        });

        assertThat(spent.getOrDefault("evalsha", 0L)).as("lock and unlock scripts, %s", spent)
                .isBetween(2L * PAIRS, 2L * PAIRS + FEW);
        assertThat(spent.getOrDefault("eval", 0L)).as("writes of the identity record, %s", spent).isLessThanOrEqualTo(FEW);
    }

    @Test
    void aThreadThatTakesManyLocksOneAfterTheOtherIsAddedToItsRecordOnce() {
        // every hold is still held when the next addition is due: only the set of owners named since the last whole
        // write keeps the thread from being added again at each spacing
        RelockClient client = newClient();
        List<RelockLock> locks = new ArrayList<>();
        for (int i = 0; i < PAIRS; i++) {
            locks.add(client.lock("kept-" + i));
        }
        long start = System.nanoTime();
        Map<String, Long> spent = spentOn(client.lock("kept-warm-up"), () -> locks.forEach(RelockLock::lock));
        long elapsedMillis = millisSince(start);
        locks.forEach(RelockLock::unlock);

        assertThat(spent.getOrDefault("eval", 0L)).as("writes of the identity record in %s ms, %s", elapsedMillis, spent)
                .isLessThanOrEqualTo(FEW);
    }

    @Test
    void handlesAcquiredInALoopAddAtMostOneRecordWritePerSpacing() {
        // each handle is an owner id of its own: one addition per handle would be one EVAL per acquisition
        RelockLock lock = newClient().lock("looped-handles");
        long start = System.nanoTime();
        Map<String, Long> spent = spentOn(lock, () -> {
            for (int i = 0; i < PAIRS; i++) {
                try (LockHandle handle = lock.acquire()) {
                    assertThat(handle.fencingToken()).isPositive();
                }
            }
        });
        long elapsedMillis = millisSince(start);

        assertThat(spent.getOrDefault("eval", 0L)).as("writes of the identity record in %s ms, %s", elapsedMillis, spent)
                .isLessThanOrEqualTo(FEW + elapsedMillis / ADDITION_SPACING_MILLIS);
    }

    @Test
    void anAdditionNeverBringsBackARecordThatExpiredOrWasDeleted() throws Exception {
        // the lock scripts in the server's cache, so that the client below sends no EVAL after a NOSCRIPT; closed, it
        // has sent everything it will
        try (RelockClient warm = RelockClient.create(redis.uri())) {
            warmUp(warm.lock("after-expiry"));
        }
        // no lease keeper pass in this test (every 20 s): the record's only writes are its start-up write and additions
        RelockClient client = newClient(b -> b.defaultLease(Duration.ofSeconds(60)));
        String record = "relock:client:{" + client.clientId() + "}";
        await("the start-up write of the record").atMost(HANG).until(() -> admin().exists(record) == 1);
        assertThat(admin().pttl(record)).isPositive();
        // as if it expired (the client was cut off longer than its time to live)
        admin().del(record);
        long writes = commandCalls().getOrDefault("eval", 0L);

        CountDownLatch taken = new CountDownLatch(1);
        CountDownLatch done = new CountDownLatch(1);
        CompletableFuture<Long> holder = holdingInNewThread("late-holder", client.lock("after-expiry"), HANG, taken,
                done);
        try {
            assertThat(taken.await(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
            await("the addition for late-holder").atMost(Duration.ofSeconds(6))
                    .until(() -> commandCalls().getOrDefault("eval", 0L) > writes);
            assertThat(admin().exists(record)).as("the record after an addition found it gone").isZero();
        } finally {
            done.countDown();
        }
        resultOf(holder);
    }

    @Test
    void nameHoldersAddsFieldsOnlyToARecordThatExistsAndKeepsItsTimeToLive() {
        String record = "relock:client:{feedface}";
        admin().hset(record, Map.of("host", "h", "pid", "1", "t:1", "main"));
        admin().pexpire(record, 60_000);

        Long added = admin().eval(SharedScripts.NAME_HOLDERS.body(), ScriptOutputType.INTEGER, new String[] {record},
                "t:2", "worker-2", "t:h7", "worker-7");
        assertThat(added).isEqualTo(1);
        assertThat(admin().hgetall(record)).containsEntry("t:1", "main").containsEntry("t:2", "worker-2")
                .containsEntry("t:h7", "worker-7").containsEntry("host", "h");
        assertThat(admin().pttl(record)).as("the time to live the whole write gave it").isBetween(1L, 60_000L);

        admin().del(record);
        Long none = admin().eval(SharedScripts.NAME_HOLDERS.body(), ScriptOutputType.INTEGER, new String[] {record},
                "t:2", "worker-2");
        assertThat(none).isZero();
        assertThat(admin().exists(record)).as("a record name-holders.lua would have created").isZero();
    }

    /**
     * The calls per command that {@code work} on {@code lock} cost, after a warm-up of the lock: the scripts loaded, and
     * the test thread named in its client's record.
     */
    private Map<String, Long> spentOn(RelockLock lock, Runnable work) {
        warmUp(lock);
        Map<String, Long> before = commandCalls();
        work.run();
        return since(before);
    }

    /** Loads the scripts (a first EVALSHA answered NOSCRIPT goes again by EVAL) and names the test thread. */
    private static void warmUp(RelockLock lock) {
        lock.lock();
        lock.unlock();
        lock.lock();
        lock.unlock();
    }

    /** Calls per command the server has served so far (INFO commandstats), without INFO's own. */
    private Map<String, Long> commandCalls() {
        Map<String, Long> calls = new HashMap<>();
        for (String line : admin().info("commandstats").split("\r\n")) {
            if (line.startsWith("cmdstat_") && !line.startsWith("cmdstat_info:")) {
                String command = line.substring("cmdstat_".length(), line.indexOf(':'));
                calls.put(command, Long.parseLong(line.replaceAll("^cmdstat_[^:]+:calls=(\\d+),.*", "$1")));
            }
        }
        return calls;
    }

    private Map<String, Long> since(Map<String, Long> before) {
        Map<String, Long> spent = new HashMap<>();
        commandCalls().forEach((command, calls) -> {
            long delta = calls - before.getOrDefault(command, 0L);
            if (delta != 0) {
                spent.put(command, delta);
            }
        });
        return spent;
    }
}
