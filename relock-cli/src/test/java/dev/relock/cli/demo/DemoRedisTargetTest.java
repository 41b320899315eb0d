package dev.relock.cli.demo;

import static org.assertj.core.api.Assertions.assertThat;

import dev.relock.testredis.ClosedPort;
import dev.relock.testredis.RedisServer;
import java.time.Duration;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * How {@code relock demo} tells whether a Redis answers at the default address. Tested on fixture
 * servers: the Redis at the real default address is not this test's to use.
 */
@Tag("redis")
class DemoRedisTargetTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(2);

    @Test
    void aRedisThatAnswersPingIsUsable() {
        try (RedisServer redis = RedisServer.start()) {
            assertThat(RedisTarget.probe(RedisServer.HOST, redis.port(), TIMEOUT)).isEqualTo(RedisTarget.Probe.ANSWERS);
        }
    }

    @Test
    void aRedisThatWantsAPasswordIsNot() {
        try (RedisServer redis = RedisServer.builder().password("secret").start()) {
            assertThat(RedisTarget.probe(RedisServer.HOST, redis.port(), TIMEOUT)).isEqualTo(RedisTarget.Probe.REFUSES);
        }
    }

    @Test
    void aClosedPortAnswersNothing() {
        try (ClosedPort closed = ClosedPort.open()) {
            assertThat(RedisTarget.probe(RedisServer.HOST, closed.port(), TIMEOUT)).isEqualTo(RedisTarget.Probe.NOTHING);
        }
    }

    @Test
    void addressesAreShownWithoutCredentials() {
        assertThat(RedisAddress.display("redis://app:hunter2@redis.internal:6380/2")).isEqualTo("redis://redis.internal:6380/2");
        assertThat(RedisAddress.display("rediss://:hunter2@10.0.0.5")).isEqualTo("rediss://10.0.0.5:6379");
    }
}
