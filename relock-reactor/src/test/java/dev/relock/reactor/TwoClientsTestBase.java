package dev.relock.reactor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.relock.LockInfo;
import dev.relock.RelockClient;
import dev.relock.testredis.RedisServer;
import java.time.Duration;
import org.awaitility.core.ConditionFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

/**
 * A fixture Redis for one test class, and two clients of it, as two applications: {@code client} takes locks
 * through this module, {@code other} holds rivals, inspects and sets up. After each test nothing is held.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class TwoClientsTestBase {

    /** A bound that only a hang exceeds. */
    static final Duration HANG = Duration.ofSeconds(10);

    RedisServer redis;
    RelockClient client;
    RelockClient other;

    @BeforeAll
    void startRedis() {
        redis = RedisServer.start();
        client = underTest(RelockClient.create(redis.uri()));
        other = RelockClient.create(redis.uri());
    }

    /** The client the tests take locks through, made of a plain one: that one itself unless overridden. */
    RelockClient underTest(RelockClient plain) {
        return plain;
    }

    @AfterEach
    void nothingIsLeftHeld() {
        // releases after a cancel run in the background
        soon("every hold released").until(() -> other.list("*").stream().noneMatch(LockInfo::isHeld));
        assertThat(client.heldLocks()).as("holds the client still counts").isEmpty();
    }

    @AfterAll
    void stopRedis() {
        client.close();
        other.close();
        redis.close();
    }

    /** Checks at once, then every 10 ms, up to {@link #HANG}. */
    static ConditionFactory soon(String what) {
        return await(what).atMost(HANG).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(10));
    }
}
