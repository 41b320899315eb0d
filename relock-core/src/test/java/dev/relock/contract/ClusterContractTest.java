package dev.relock.contract;

import dev.relock.RelockClient;
import dev.relock.RelockClientBuilder;
import dev.relock.testredis.RedisCluster;
import dev.relock.testredis.RedisServer;
import java.util.List;
import org.junit.jupiter.api.Tag;

/** The contract on a Redis Cluster of three masters without replicas; clients know one seed node. */
@Tag("redis")
class ClusterContractTest extends Deployment {

    private RedisCluster cluster;

    @Override
    void start() {
        cluster = RedisCluster.builder().masters(3).start();
    }

    @Override
    void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Override
    RelockClientBuilder clientBuilder() {
        return RelockClient.builder().redisClusterUris(cluster.seedUri());
    }

    @Override
    List<RedisServer> keyHolders() {
        return cluster.masters();
    }
}
