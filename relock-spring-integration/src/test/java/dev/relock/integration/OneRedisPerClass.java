package dev.relock.integration;

import dev.relock.testredis.RedisServer;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

/** One real redis-server per test class, started by the fixture on a free loopback port. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class OneRedisPerClass {

    /** A bound that only a hang exceeds; never a performance goal. */
    static final Duration HANG = Duration.ofSeconds(10);

    RedisServer redis;

    @BeforeAll
    void startRedis() {
        redis = RedisServer.start();
    }

    @AfterAll
    void stopRedis() {
        redis.close();
    }
}
