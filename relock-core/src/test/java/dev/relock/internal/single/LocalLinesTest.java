package dev.relock.internal.single;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.relock.LockHandle;
import dev.relock.RelockClient;
import dev.relock.RelockLock;
import dev.relock.TestThreads;
import dev.relock.internal.engine.EngineClient;
import dev.relock.internal.engine.Hold;
import dev.relock.internal.engine.HoldTable;
import dev.relock.internal.engine.LockKeys;
import dev.relock.internal.engine.LockMode;
import dev.relock.internal.engine.Ticker;
import dev.relock.testredis.RedisServer;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The client's lines ({@link LocalLines}) at the edges a whole client cannot time: a thread joining the line of a hold
 * that ends under it, and a hand-over that finds nobody to hand over to. Races are made deterministic by holding the
 * monitor a thread must pass and waiting until it is blocked there, never by sleeping.
 */
@Tag("redis")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LocalLinesTest {

    /** A bound that only a hang exceeds; well before the 30 s lease of the holds below. */
    private static final Duration HANG = Duration.ofSeconds(10);
    private static final Duration LEASE = Duration.ofSeconds(30);

    private RedisServer redis;
    private final List<RelockClient> clients = new ArrayList<>();
    private final TestThreads threads = new TestThreads();

    @BeforeAll
    void startRedis() {
        redis = RedisServer.start();
    }

    @AfterAll
    void stopRedis() {
        redis.close();
    }

    @AfterEach
    void closeClients() throws InterruptedException {
        clients.forEach(RelockClient::close);
        clients.clear();
        assertThat(threads.joinAll(HANG)).as("test threads still running after their clients closed").isEmpty();
        redis.flushAll();
    }

    /**
     * Review finding: a thread checks that the holder leads the line, and a loss reported by the lease keeper (here:
     * Redis no longer had the key) ends the hold before the thread is in the line. The loss's wake must still reach
     * it: it takes the lock at once, not at the lost hold's lease end 30 s later.
     */
    @Test
    void aThreadJoiningTheLineOfAHoldBeingLostTakesTheLockAtOnce() throws Exception {
        joiningWhileTheHoldEnds("joined-while-lost", (engine, hold) -> {
            redis.execute("DEL", hold.keys.lock());
            engine.losses().reportLost(hold, "Redis no longer had it (deleted by the test)");
        });
    }

    /** The same for a hold released without anyone seeing it (an asynchronous acquisition nobody took). */
    @Test
    void aThreadJoiningTheLineOfAHoldReleasedUnseenTakesTheLockAtOnce() throws Exception {
        joiningWhileTheHoldEnds("joined-while-released-unseen", (engine, hold) -> engine.releases().releaseUnseen(hold));
    }

    /**
     * A holder, a waiter in its line and a joiner stopped inside its join, after its check of the holder and before it
     * is in the line (the line's monitor held here). Then {@code end} ends the hold, in a thread of its own, until that
     * thread waits to look at the line; the waiter gives up, which takes the line out of the map; and the joiner goes
     * on into a new line. It must get the lock well before the holder's lease ends.
     */
    private void joiningWhileTheHoldEnds(String name, BiConsumer<SingleServerEngine, Hold> end) throws Exception {
        RelockClient client = newClient();
        SingleServerEngine engine = (SingleServerEngine) ((EngineClient) client).engine();
        RelockLock lock = client.lock(name);
        // owned by their handles, not by this thread
        assertThat(lock.tryAcquireAsync(Duration.ZERO, LEASE)).succeedsWithin(HANG).isNotEqualTo(Optional.empty());
        Hold holder = writerOf(client, name);
        CompletableFuture<Optional<LockHandle>> waiter = lock.tryAcquireAsync(Duration.ofMinutes(1))
                .toCompletableFuture();
        await().atMost(HANG).until(() -> engine.localLines().line(holder.keys) != null);
        LocalLines.Line line = engine.localLines().line(holder.keys);

        CompletableFuture<Boolean> joined;
        CompletableFuture<Void> ended;
        synchronized (line) {
            joined = threads.start("joiner", () -> {
                boolean acquired = lock.tryLock(2, TimeUnit.MINUTES);
                if (acquired) {
                    lock.unlock();
                }
                return acquired;
            });
            Thread joiner = threadNamed("joiner");
            await("the joiner past its check of the holder").atMost(HANG)
                    .until(() -> blockedOn(joiner, line) && framesOf(joiner).anyMatch("joinHolder"::equals));
            ended = threads.start("ender", () -> {
                end.accept(engine, holder);
                return null;
            });
            Thread ender = threadNamed("ender");
            await("the hold ended, its wake about to look at the line").atMost(HANG)
                    .until(() -> !HoldTable.isLiveWriter(holder) && ender.getState() == Thread.State.BLOCKED
                            && framesOf(ender).anyMatch("wakeIfUnled"::equals));
            // the waiter leaves: the line, now empty, goes out of the map, and the joiner will make a new one
            assertThat(waiter.cancel(false)).isTrue();
            assertThat(engine.localLines().line(holder.keys)).isNull();
        }

        // a joiner the hold's end missed waits in its line until that hold's lease end as counted at its join: 30 s
        assertThat(joined).as("the joiner's tryLock").succeedsWithin(HANG).isEqualTo(true);
        assertThat(ended).succeedsWithin(HANG);
        await().atMost(HANG).until(() -> engine.localLines().size() == 0);
    }

    /**
     * Review finding: a last release makes a line for a thread of this client that waits in Redis; that thread leaves
     * before the release looks again. The release hands over nothing, and the line it made must not stay in the map
     * (one entry for every lock ever released so).
     */
    @Test
    void aHandOverForAWaiterInRedisThatLeftLeavesNoLine() {
        HoldTable holds = new HoldTable(Ticker.SYSTEM);
        LocalLines lines = new LocalLines(holds, Runnable::run, Ticker.SYSTEM);
        Hold holder = new Hold("left", LockKeys.of("relock", "left"), LockMode.WRITE, "client:1", 1,
                LEASE.toMillis(), false, System.nanoTime());
        holds.add(holder);
        // waits in Redis when the release first asks, and has left when it asks again
        AtomicInteger asked = new AtomicInteger();

        assertThat(lines.beginHandOver(holder, true, () -> asked.getAndIncrement() == 0)).isNull();
        assertThat(asked).as("asked twice").hasValue(2);
        assertThat(lines.size()).as("lines left in the map").isZero();
    }

    private RelockClient newClient() {
        RelockClient client = RelockClient.builder().redisUri(redis.uri()).defaultLease(Duration.ofMinutes(3)).build();
        clients.add(client);
        return client;
    }

    private static Hold writerOf(RelockClient client, String name) {
        return ((EngineClient) client).holds().all().stream()
                .filter(hold -> hold.lockName.equals(name) && hold.mode == LockMode.WRITE).findFirst().orElseThrow();
    }

    private static Thread threadNamed(String name) {
        return Thread.getAllStackTraces().keySet().stream().filter(thread -> thread.getName().equals(name))
                .findFirst().orElseThrow();
    }

    /** Whether {@code thread} is blocked entering the monitor of {@code monitor}. */
    private static boolean blockedOn(Thread thread, Object monitor) {
        ThreadInfo info = ManagementFactory.getThreadMXBean().getThreadInfo(thread.getId());
        return info != null && info.getThreadState() == Thread.State.BLOCKED && info.getLockInfo() != null
                && info.getLockInfo().getIdentityHashCode() == System.identityHashCode(monitor);
    }

    private static Stream<String> framesOf(Thread thread) {
        return Stream.of(thread.getStackTrace()).map(StackTraceElement::getMethodName);
    }
}
