package dev.relock.contract;

import dev.relock.RelockClient;
import dev.relock.RelockClientBuilder;
import dev.relock.testredis.RedisSentinelGroup;
import dev.relock.testredis.RedisServer;
import java.util.List;
import org.junit.jupiter.api.Tag;

/** The contract through Sentinel: a master, one replica, three sentinels; clients know only the sentinels. */
@Tag("redis")
class SentinelContractTest extends Deployment {

    private RedisSentinelGroup group;

    @Override
    void start() {
        group = RedisSentinelGroup.builder().replicas(1).start();
    }

    @Override
    void stop() {
        if (group != null) {
            group.close();
        }
    }

    @Override
    RelockClientBuilder clientBuilder() {
        return RelockClient.builder().redisUri(group.sentinelUri());
    }

    @Override
    List<RedisServer> keyHolders() {
        return List.of(group.master());
    }
}
