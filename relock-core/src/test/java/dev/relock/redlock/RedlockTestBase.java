package dev.relock.redlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.relock.LeaseLost;
import dev.relock.RelockClient;
import dev.relock.RelockClientBuilder;
import dev.relock.LeakCheck;
import dev.relock.testredis.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

/**
 * Base of the Redlock tests: {@link #nodeCount()} independent redis-servers per test class, started
 * by the fixture on free loopback ports, without persistence.
 *
 * <p>After each test {@link LeakCheck} closes the clients; then every node that a test stopped, killed or
 * paused runs again, and the clients may have left no test thread, lease keeper thread or lock hash on
 * any node (every hold was released or ran out); then every node is flushed.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class RedlockTestBase {

    /** A bound that only a hang exceeds; never a performance goal. */
    static final Duration HANG = Duration.ofSeconds(15);

    final List<RedisServer> nodes = new ArrayList<>();
    final List<LeaseLost> lost = new CopyOnWriteArrayList<>();
    private final LeakCheck leakCheck = new LeakCheck(HANG);

    abstract int nodeCount();

    @BeforeAll
    void startNodes() {
        for (int i = 0; i < nodeCount(); i++) {
            nodes.add(RedisServer.start());
        }
    }

    @AfterAll
    void stopNodes() {
        nodes.forEach(RedisServer::close);
    }

    @AfterEach
    void closeClientsAndCheckNothingIsLeft() throws InterruptedException {
        leakCheck.closeClients();
        lost.clear();
        for (RedisServer node : nodes) {
            if (node.isPaused()) {
                node.resume();
            }
            if (!node.isRunning()) {
                node.restart();
            }
        }
        // tests here write keys of their own (attempts, queue marks): only lock hashes are leaks
        leakCheck.check(nodes, LeakCheck.Left.NO_LOCK_HASH);
    }

    List<String> uris() {
        List<String> uris = new ArrayList<>();
        nodes.forEach(node -> uris.add(node.uri()));
        return uris;
    }

    /** A Redlock client on every node of this class, closed after the test; lost leases go to {@link #lost}. */
    RelockClient newClient(UnaryOperator<RelockClientBuilder> settings) {
        return leakCheck.closedAfterTest(settings.apply(RelockClient.builder().redlockUris(uris())
                .leaseLostListener(lost::add)).build());
    }

    RelockClient newClient() {
        return newClient(UnaryOperator.identity());
    }

    /** Closes {@code client} after the test. */
    void registerForClose(RelockClient client) {
        leakCheck.closedAfterTest(client);
    }

    /** The owner holding {@code name} on one node, or null: the lock hash's '~writer' field. */
    static String holderOn(RedisServer node, String name) {
        return node.execute("HGET", "relock:{" + name + "}", "~writer");
    }

    /** How many writers wait on every node alike: the size of the smallest queue. */
    long queuedOnEveryNode(String name) {
        return nodes.stream().mapToLong(node -> Long.parseLong(node.execute("ZCARD", "relock:{" + name + "}:queue")))
                .min().orElse(0);
    }

    /** How many nodes (of those running and not paused) hold {@code name} for anybody. */
    long nodesHolding(String name) {
        return nodes.stream().filter(node -> node.isRunning() && !node.isPaused())
                .filter(node -> holderOn(node, name) != null).count();
    }

    /**
     * Waits until every client of this test has its two connections (commands, pub/sub) to every
     * running node again, after a test restarted some: Lettuce reconnects in the background.
     */
    void awaitReconnected() {
        for (RedisServer node : nodes) {
            if (node.isRunning() && !node.isPaused()) {
                // the fixture's own connection is one more
                await().atMost(HANG).until(() -> connections(node) >= 2 * leakCheck.clientCount() + 1);
            }
        }
    }

    private static long connections(RedisServer node) {
        return node.execute("CLIENT", "LIST").lines().filter(line -> line.startsWith("id=")).count();
    }

    /** Runs {@code work} on a new thread of its own; the test ends only after it ended. */
    <T> CompletableFuture<T> inNewThread(String name, Callable<T> work) {
        return leakCheck.inNewThread(name, work);
    }

    static <T> T resultOf(CompletableFuture<T> future) throws Exception {
        return future.get(HANG.toMillis(), TimeUnit.MILLISECONDS);
    }

    static long millisSince(long startNanos) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
    }
}
