package dev.relock.spring.boot;

import dev.relock.testredis.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * Base of the tests that start light contexts with the auto-configuration: one fixture Redis per
 * class (from {@link #startRedisServer()}), and a {@link #runner} whose {@code spring.data.redis}
 * host and port point at it. Each context the runner starts is closed when its test lambda ends.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class RelockContextTestBase {

    protected RedisServer redis;
    protected ApplicationContextRunner runner;

    /** The server for this class; a plain one unless overridden. */
    protected RedisServer startRedisServer() {
        return RedisServer.start();
    }

    @BeforeAll
    protected void startRedis() {
        redis = startRedisServer();
        runner = new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(RelockAutoConfiguration.class))
                .withPropertyValues("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port());
    }

    @AfterAll
    protected void stopRedis() {
        if (redis != null) {
            redis.close();
        }
    }
}
