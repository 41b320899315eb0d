package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.relock.testredis.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.awaitility.core.ConditionFactory;

/**
 * The clients and threads of one test, and the one check after it that nothing of them is left. Every test base
 * that hands out clients (one server, Redlock nodes, the contract's deployments) registers them here and calls
 * {@link #closeAndCheck} (or its two halves) after each test.
 *
 * <p>The check closes every client, then requires: every test thread ended; no lease keeper thread of a closed
 * client still alive; no lock hash on any server given (every hold was released or ran out); with
 * {@link Left#NO_STATE}, also no waiter queue, no key of relock's without an expiry (a semaphore's permit count
 * aside, which is kept until changed) and no subscription on a relock channel. Server state is polled for a while,
 * as a Redlock release to the nodes beyond a majority, or a closed connection's subscriptions, may still be on
 * their way. The servers are flushed in any case, so the next test starts empty.
 *
 * <p>Registration may come from any thread; the close and the check run on the test's thread after the test.
 */
public final class LeakCheck {

    /** How much of relock's state on the servers the check forbids. */
    public enum Left {
        /** Only lock hashes: for tests that plant keys of their own (queues, grant offers, squatters). */
        NO_LOCK_HASH,
        /** Lock hashes, queues, keys without expiry and subscriptions: what the contract suite holds clients to. */
        NO_STATE
    }

    private final Duration hang;
    private final List<RelockClient> clients = new CopyOnWriteArrayList<>();
    private final TestThreads threads = new TestThreads();
    // from closeClients() to the end of check(): what the closed clients and the test threads left running
    private final List<String> keeperSuffixes = new ArrayList<>();
    private final List<String> stillRunning = new ArrayList<>();

    /** @param hang a bound that only a hang exceeds, for the threads to end and the servers to settle */
    public LeakCheck(Duration hang) {
        this.hang = hang;
    }

    /** Registers {@code client} to be closed after the test, and returns it. */
    public RelockClient closedAfterTest(RelockClient client) {
        clients.add(client);
        return client;
    }

    /** How many clients are registered now. */
    public int clientCount() {
        return clients.size();
    }

    /** Runs {@code work} on a new thread of its own (a new lock owner); the check requires it to have ended. */
    public <T> CompletableFuture<T> inNewThread(String name, Callable<T> work) {
        return threads.start(name, work);
    }

    /** Closes every registered client, checks as the class comment says, and flushes {@code servers}. */
    public void closeAndCheck(List<RedisServer> servers, Left left) throws InterruptedException {
        closeClients();
        check(servers, left);
    }

    /**
     * The first half of {@link #closeAndCheck}, for a base that mends its servers (resumes, restarts) between the
     * close and the check: closes every registered client and waits for the test threads.
     */
    public void closeClients() throws InterruptedException {
        for (RelockClient client : clients) {
            keeperSuffixes.add("-" + client.clientId().substring(0, 8));
            client.close();
        }
        clients.clear();
        stillRunning.addAll(threads.joinAll(hang));
    }

    /** The second half of {@link #closeAndCheck}: the check, then the flush of {@code servers}. */
    public void check(List<RedisServer> servers, Left left) {
        try {
            assertThat(stillRunning).as("test threads still running after their clients closed").isEmpty();
            List<String> found = new ArrayList<>();
            soon().untilAsserted(() -> {
                found.clear();
                for (RedisServer server : servers) {
                    found.addAll(leftKeys(server, left));
                }
                assertThat(found).as(left == Left.NO_STATE
                        ? "lock hashes, queues or keys without expiry left after every client closed"
                        : "lock hashes left after every client closed").isEmpty();
            });
            if (left == Left.NO_STATE) {
                soon().untilAsserted(() -> {
                    for (RedisServer server : servers) {
                        assertThat(subscriptions(server)).as("relock channels still subscribed on " + server).isEmpty();
                    }
                });
            }
            soon().untilAsserted(() -> assertThat(Thread.getAllStackTraces().keySet())
                    .filteredOn(Thread::isAlive)
                    .extracting(Thread::getName)
                    .as("lease keeper threads of closed clients")
                    .noneMatch(name -> keeperSuffixes.stream().anyMatch(name::endsWith)));
        } finally {
            keeperSuffixes.clear();
            stillRunning.clear();
            servers.forEach(RedisServer::flushAll);
        }
    }

    /** Checks at once, then every 10 ms, up to the hang bound: these conditions usually hold within a round trip. */
    private ConditionFactory soon() {
        return await().atMost(hang).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(10));
    }

    /** Keys of relock's on {@code server} that a finished test must not leave, with why. */
    private static List<String> leftKeys(RedisServer server, Left left) {
        List<String> found = new ArrayList<>();
        for (String key : items(server.execute("KEYS", "relock:*"))) {
            if (isLockHash(server, key, left)) {
                found.add(server.port() + " " + key + " (lock hash)");
            } else if (left == Left.NO_LOCK_HASH) {
                continue;
            } else if (key.endsWith(":queue")) {
                found.add(server.port() + " " + key + " (waiter queue)");
            } else if (!key.endsWith("}:sem") && "-1".equals(server.execute("PTTL", key))) {
                found.add(server.port() + " " + key + " (no expiry)");
            }
        }
        return found;
    }

    /**
     * Lock hashes are {@code <prefix>:{<name>}}; queue, expiry and fence keys carry a suffix. A client's identity
     * record, {@code <prefix>:client:{<id>}}, is a hash of that form too. It is deleted at close unless a test cut the
     * client's connection first: then it expires, which {@link Left#NO_LOCK_HASH} lets pass and the contract does not.
     */
    private static boolean isLockHash(RedisServer server, String key, Left left) {
        if (!key.endsWith("}") || !"hash".equals(server.execute("TYPE", key))) {
            return false;
        }
        return left == Left.NO_STATE || !key.contains(":client:{") || "-1".equals(server.execute("PTTL", key));
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
