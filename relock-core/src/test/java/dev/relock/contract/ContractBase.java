package dev.relock.contract;

import static org.assertj.core.api.Assertions.assertThat;

import dev.relock.LeaseLost;
import dev.relock.RelockClient;
import dev.relock.RelockClientBuilder;
import dev.relock.TestThreads;
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
 * relock's public API. After each test the clients are closed and then nothing of them may be left:
 * no test thread still running, no lock hash or waiter queue on any server that holds keys, no key of
 * relock's without an expiry (except a semaphore's permit count, which is kept until changed), no
 * subscription on a channel of relock's, and no lease keeper thread of a closed client. Then the
 * servers are flushed so that the next test starts empty.
 */
abstract class ContractBase {

    /** A bound that only a hang exceeds; never a performance goal. */
    static final Duration HANG = Duration.ofSeconds(15);

    /** Leases lost by any client of this test, as their listeners heard them. */
    final List<LeaseLost> lost = new CopyOnWriteArrayList<>();
    private final List<RelockClient> clients = new CopyOnWriteArrayList<>();
    private final TestThreads threads = new TestThreads();

    /** The deployment this contract runs against: the enclosing class of the {@code @Nested} subclass. */
    abstract Deployment deployment();

    /** A client with default settings, closed after the test. */
    RelockClient newClient() {
        return newClient(UnaryOperator.identity());
    }

    /** A client with extra settings, closed after the test; its lost leases go to {@link #lost}. */
    RelockClient newClient(UnaryOperator<RelockClientBuilder> settings) {
        RelockClient client = settings.apply(deployment().clientBuilder().leaseLostListener(lost::add)).build();
        clients.add(client);
        return client;
    }

    /** Runs {@code work} on a new thread of its own (a new lock owner); the test ends only after it ended. */
    <T> CompletableFuture<T> inNewThread(String name, Callable<T> work) {
        return threads.start(name, work);
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
        List<String> keeperNames = new ArrayList<>();
        for (RelockClient client : clients) {
            keeperNames.add("-" + client.clientId().substring(0, 8));
            client.close();
        }
        clients.clear();
        List<String> stillRunning = threads.joinAll(HANG);
        List<RedisServer> servers = deployment().keyHolders();
        List<String> leftKeys = new ArrayList<>();
        try {
            assertThat(stillRunning).as("test threads still running after their clients closed").isEmpty();
            // a Redlock unlock returns on a majority's replies: its release to the other nodes may still be on its way
            Polling.soon().untilAsserted(() -> {
                leftKeys.clear();
                for (RedisServer server : servers) {
                    leftKeys.addAll(leftKeys(server));
                }
                assertThat(leftKeys).as("lock hashes, queues or keys without expiry left after every client closed")
                        .isEmpty();
            });
            // a closed connection's subscriptions end when the server notices the close
            Polling.soon().untilAsserted(() -> {
                for (RedisServer server : servers) {
                    assertThat(subscriptions(server)).as("relock channels still subscribed on " + server).isEmpty();
                }
            });
            Polling.soon().untilAsserted(() -> assertThat(Thread.getAllStackTraces().keySet())
                    .filteredOn(Thread::isAlive)
                    .extracting(Thread::getName)
                    .as("lease keeper threads of closed clients")
                    .noneMatch(name -> keeperNames.stream().anyMatch(name::endsWith)));
        } finally {
            servers.forEach(RedisServer::flushAll);
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

    /** Keys of relock's on {@code server} that a finished test must not leave, with why. */
    private static List<String> leftKeys(RedisServer server) {
        List<String> left = new ArrayList<>();
        for (String key : items(server.execute("KEYS", "relock:*"))) {
            boolean lockHash = key.endsWith("}") && "hash".equals(server.execute("TYPE", key));
            if (lockHash) {
                left.add(server.port() + " " + key + " (lock hash)");
            } else if (key.endsWith(":queue")) {
                left.add(server.port() + " " + key + " (waiter queue)");
            } else if (!key.endsWith("}:sem") && "-1".equals(server.execute("PTTL", key))) {
                left.add(server.port() + " " + key + " (no expiry)");
            }
        }
        return left;
    }

    /** Channels of relock's with a subscriber on {@code server}: plain and, from Redis 7, shard channels. */
    private static List<String> subscriptions(RedisServer server) {
        List<String> channels = new ArrayList<>(items(server.execute("PUBSUB", "CHANNELS", "relock:*")));
        if (server.binary().majorVersion() >= 7) {
            channels.addAll(items(server.execute("PUBSUB", "SHARDCHANNELS", "relock:*")));
        }
        return channels;
    }

    /** The items of a flat array reply as {@link RedisServer#execute} writes it: {@code [a, b]}. */
    private static List<String> items(String reply) {
        String inner = reply.substring(1, reply.length() - 1);
        return inner.isEmpty() ? List.of() : Arrays.asList(inner.split(", "));
    }
}
