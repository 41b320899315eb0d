package dev.relock.contract;

import dev.relock.RelockClient;
import dev.relock.RelockClientBuilder;
import dev.relock.testredis.RedisServer;
import java.util.List;
import org.junit.jupiter.api.Tag;

/** The contract on one standalone server (the version the fixture finds: Redis 7 here, 6.2 where none is installed). */
@Tag("redis")
class StandaloneContractTest extends Deployment {

    private RedisServer server;

    @Override
    void start() {
        server = RedisServer.start();
    }

    @Override
    void stop() {
        if (server != null) {
            server.close();
        }
    }

    @Override
    RelockClientBuilder clientBuilder() {
        return RelockClient.builder().redisUri(server.uri());
    }

    @Override
    List<RedisServer> keyHolders() {
        return List.of(server);
    }
}
