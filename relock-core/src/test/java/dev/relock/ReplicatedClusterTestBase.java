package dev.relock;

import dev.relock.testredis.RedisCluster;
import dev.relock.testredis.RedisServer;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

/**
 * Base of the tests that fail over or stall a Cluster's replicas: one {@link RedisCluster} of three masters with
 * one replica each per test class, clients on its seed URI that are closed after each test, and after each test a
 * cluster that is whole again: every paused node resumed, every killed one restarted, every slot served, the data
 * flushed. A master may be a former replica by then; tests pick their nodes from {@code cluster} each time.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class ReplicatedClusterTestBase {

    RedisCluster cluster;
    private final List<RelockClient> clients = new CopyOnWriteArrayList<>();

    @BeforeAll
    void startCluster() {
        cluster = RedisCluster.builder().masters(3).replicasPerMaster(1).start();
    }

    @AfterAll
    void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @AfterEach
    void closeClientsAndHeal() {
        clients.forEach(RelockClient::close);
        clients.clear();
        for (RedisServer node : cluster.nodes()) {
            if (node.isPaused()) {
                node.resume();
            }
            if (!node.isRunning()) {
                node.restart();
            }
        }
        cluster.awaitHealthy();
        cluster.masters().forEach(RedisServer::flushAll);
    }

    /** A client on the cluster with {@code settings}, closed after the test. */
    RelockClient newClient(UnaryOperator<RelockClientBuilder> settings) {
        RelockClient client = settings.apply(RelockClient.builder().redisClusterUris(cluster.seedUri())).build();
        clients.add(client);
        return client;
    }

    /** A lock name whose keys live on {@code master}: {@code stem} plus a number. */
    String nameOn(RedisServer master, String stem) {
        for (int i = 0; ; i++) {
            if (cluster.masterFor("relock:{" + stem + i + "}") == master) {
                return stem + i;
            }
        }
    }
}
