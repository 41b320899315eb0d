package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;

import dev.relock.testredis.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * What operators see on one Redis where the contract cannot set it up: a key that only looks like a lock's
 * (the rest of inspect() and list() is in contract/OperatorViewContract and contract/SemaphoreContract).
 */
@Tag("redis")
class InspectionTest {

    private static RedisServer server;

    @BeforeAll
    static void startRedis() {
        server = RedisServer.start();
    }

    @AfterAll
    static void stopRedis() {
        server.close();
    }

    @Test
    void listSkipsAKeyOfAnotherTypeWhereALocksKeyWouldBe() {
        try (RelockClient client = RelockClient.create(server.uri())) {
            client.lock("list:a").lock();
            server.execute("SET", "relock:{list:not-a-lock}", "text");

            assertThat(client.list("list:*")).extracting(LockInfo::name).containsExactly("list:a");
            assertThat(client.list("*")).extracting(LockInfo::name).containsExactly("list:a");
            client.lock("list:a").unlock();
            server.execute("DEL", "relock:{list:not-a-lock}");
        }
    }
}
