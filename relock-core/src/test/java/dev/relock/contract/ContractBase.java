package dev.relock.contract;

import dev.relock.LeakCheck;
import dev.relock.LeaseLost;
import dev.relock.RelockClient;
import dev.relock.RelockClientBuilder;
import dev.relock.testredis.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;

/**
 * Base of every contract class: clients and threads of one test, and the leak check after it.
 *
 * <p>A contract test sees its deployment only through {@link #newClient} (a builder pointed at it) and
 * relock's public API. After each test the clients are closed and then nothing of them may be left
 * ({@link LeakCheck} with {@link LeakCheck.Left#NO_STATE}): no test thread still running, no lock hash
 * or waiter queue on any server that holds keys, no key of relock's without an expiry (except a
 * semaphore's permit count, which is kept until changed), no subscription on a channel of relock's,
 * and no lease keeper thread of a closed client. Then the servers are flushed so that the next test
 * starts empty.
 */
abstract class ContractBase {

    /** A bound that only a hang exceeds; never a performance goal. */
    static final Duration HANG = Duration.ofSeconds(15);

    /** Leases lost by any client of this test, as their listeners heard them. */
    final List<LeaseLost> lost = new CopyOnWriteArrayList<>();
    private final LeakCheck leakCheck = new LeakCheck(HANG);

    /** The deployment this contract runs against: the enclosing class of the {@code @Nested} subclass. */
    abstract Deployment deployment();

    /** A client with default settings, closed after the test. */
    RelockClient newClient() {
        return newClient(UnaryOperator.identity());
    }

    /** A client with extra settings, closed after the test; its lost leases go to {@link #lost}. */
    RelockClient newClient(UnaryOperator<RelockClientBuilder> settings) {
        return leakCheck.closedAfterTest(settings.apply(deployment().clientBuilder().leaseLostListener(lost::add))
                .build());
    }

    /** Runs {@code work} on a new thread of its own (a new lock owner); the test ends only after it ended. */
    <T> CompletableFuture<T> inNewThread(String name, Callable<T> work) {
        return leakCheck.inNewThread(name, work);
    }

    /** Waits for a result of {@link #inNewThread} no longer than {@link #HANG}. */
    static <T> T resultOf(CompletableFuture<T> future) throws Exception {
        return future.get(HANG.toMillis(), TimeUnit.MILLISECONDS);
    }

    static long millisSince(long startNanos) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
    }

    @AfterEach
    final void closeClientsAndCheckNothingIsLeft() throws InterruptedException {
        try {
            leakCheck.closeClients();
            leakCheck.check(deployment().keyHolders(), LeakCheck.Left.NO_STATE); // the holders after the close
        } finally {
            lost.clear();
        }
    }

    /**
     * The keys of relock's lock named {@code name} on every server that holds keys ({@code port key}), but its
     * fence, which outlives every hold (24 h).
     */
    List<String> keysOfLock(String name) {
        List<String> keys = new ArrayList<>();
        for (RedisServer server : deployment().keyHolders()) {
            for (String key : items(server.execute("KEYS", "relock:{" + name + "}*"))) {
                if (!key.endsWith(":fence")) {
                    keys.add(server.port() + " " + key);
                }
            }
        }
        return keys;
    }

    /** The items of a flat array reply as {@link RedisServer#execute} writes it: {@code [a, b]}. */
    private static List<String> items(String reply) {
        String inner = reply.substring(1, reply.length() - 1);
        return inner.isEmpty() ? List.of() : Arrays.asList(inner.split(", "));
    }
}
