package dev.relock;

import dev.relock.testredis.RedisSentinelGroup;
import dev.relock.testredis.RedisServer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

/**
 * Base of the Sentinel tests: one {@link RedisSentinelGroup} per test class (a master, one replica,
 * three sentinels), clients on its {@code redis-sentinel://} URI that are closed after each test,
 * and after each test a group that is whole again: a killed node restarted and every replica in
 * sync, the data flushed.
 *
 * <p>One replica only, so a killed master's writes that had not reached it are gone for good: the
 * replica is the only candidate for promotion.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class SentinelTestBase {

    /** How long the group may take to fail over (down-after 1 s, election, clients reconnecting). */
    static final Duration FAILOVER = Duration.ofSeconds(30);

    RedisSentinelGroup group;
    private final List<RelockClient> clients = new CopyOnWriteArrayList<>();

    @BeforeAll
    void startGroup() {
        group = RedisSentinelGroup.builder().replicas(1).start();
    }

    @AfterAll
    void stopGroup() {
        if (group != null) {
            group.close();
        }
    }

    @AfterEach
    void closeClientsAndMendTheGroup() {
        for (RelockClient client : clients) {
            client.close();
        }
        clients.clear();
        for (RedisServer node : group.dataNodes()) {
            if (node.isPaused()) {
                node.resume();
            }
            if (!node.isRunning()) {
                node.restart();
            }
        }
        group.awaitReplicasInSync();
        group.master().flushAll();
    }

    /** A client on the group's sentinel URI with extra settings, closed after the test. */
    RelockClient newClient(UnaryOperator<RelockClientBuilder> settings) {
        RelockClient client = settings.apply(RelockClient.builder().redisUri(group.sentinelUri())).build();
        clients.add(client);
        return client;
    }

    /** Waits until every write the master took so far reached its replica. */
    void awaitReplicated() {
        RedisServer master = group.master();
        // WAIT counts the writes of its own connection; a write of ours after the others covers them
        master.execute("SET", "relock-test:sync", "1");
        master.execute("WAIT", "1", "10000");
    }

    /**
     * Makes the replica miss every write from now on until it is {@link RedisServer#resume resumed}:
     * it is frozen, and its link to the master is cut so nothing waits for it in a socket buffer.
     * The sentinels do not notice in the short time a test keeps it so.
     */
    RedisServer cutOffReplica() {
        RedisServer master = group.master();
        RedisServer replica = group.replicas().get(0);
        replica.pause();
        master.execute("CLIENT", "KILL", "TYPE", "replica");
        return replica;
    }

    /** Whether {@code node} has the lock hash of lock {@code name}. */
    static boolean hasLock(RedisServer node, String name) {
        return "1".equals(node.execute("EXISTS", "relock:{" + name + "}"));
    }
}
