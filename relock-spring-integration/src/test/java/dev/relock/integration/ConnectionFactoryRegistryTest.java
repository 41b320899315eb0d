package dev.relock.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.relock.RelockClient;
import dev.relock.testredis.RedisServer;
import java.util.concurrent.locks.Lock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * {@code RelockLockRegistries.fromConnectionFactory}, the one-line change from {@code RedisLockRegistry}: registries
 * made from a Spring Data Redis {@link LettuceConnectionFactory} (never started: relock reads its configuration) of
 * the fixture's redis-server, which has a password; the factory names database 4. Runs on Spring Integration 6.x and
 * 7.x with the Spring Data Redis each is managed with.
 */
@Tag("redis")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ConnectionFactoryRegistryTest {

    private static final String PASSWORD = "factory-pw";

    private RedisServer redis;
    private LettuceConnectionFactory connectionFactory;

    @BeforeAll
    void startRedis() {
        redis = RedisServer.builder().password(PASSWORD).start();
        RedisStandaloneConfiguration standalone = new RedisStandaloneConfiguration(redis.host(), redis.port());
        standalone.setPassword(PASSWORD);
        standalone.setDatabase(4);
        connectionFactory = new LettuceConnectionFactory(standalone);
    }

    @AfterAll
    void stopRedis() {
        redis.close();
    }

    @AfterEach
    void emptyRedis() {
        redis.flushAll();
    }

    @Test
    void aRegistryFromTheFactoryLocksExcludesASecondOneAndReleases() {
        try (RelockLockRegistry instanceA = RelockLockRegistries.fromConnectionFactory(connectionFactory, "app");
                RelockLockRegistry instanceB = RelockLockRegistries.fromConnectionFactory(connectionFactory, "app")) {
            Lock lockA = instanceA.obtain("job");
            assertThat(lockA.tryLock()).isTrue();
            assertThat(redis.execute("INFO", "keyspace")).as("the factory's database").contains("db4:keys=");

            assertThat(instanceB.obtain("job").tryLock()).as("the second registry, while the first holds it").isFalse();

            lockA.unlock();
            Lock lockB = instanceB.obtain("job");
            assertThat(lockB.tryLock()).as("the second registry, once the first released it").isTrue();
            lockB.unlock();
        }
    }

    @Test
    void closingTheRegistryClosesItsClientReleasingWhatItHeld() {
        try (RelockLockRegistry other = RelockLockRegistries.fromConnectionFactory(connectionFactory, "app")) {
            RelockLockRegistry closed = RelockLockRegistries.fromConnectionFactory(connectionFactory, "app");
            assertThat(closed.obtain("job").tryLock()).isTrue();

            closed.close();

            assertThat(other.obtain("job").tryLock()).as("released by the closed client").isTrue();
            assertThatThrownBy(() -> closed.obtain("job")).isInstanceOf(IllegalStateException.class);
            closed.close();
            other.obtain("job").unlock();
        }
    }

    @Test
    void aRegistryBeanIsClosedWithItsContext() {
        RelockLockRegistry registry;
        try (var context = new AnnotationConfigApplicationContext()) {
            context.registerBean(RedisStandaloneConfiguration.class, connectionFactory::getStandaloneConfiguration);
            context.register(RegistryConfiguration.class);
            context.refresh();
            registry = context.getBean(RelockLockRegistry.class);
            assertThat(registry.obtain("job").tryLock()).isTrue();
        }

        assertThatThrownBy(() -> registry.obtain("job")).isInstanceOf(IllegalStateException.class);
        try (RelockLockRegistry other = RelockLockRegistries.fromConnectionFactory(connectionFactory, "app")) {
            Lock lock = other.obtain("job");
            assertThat(lock.tryLock()).as("released when the context closed").isTrue();
            lock.unlock();
        }
    }

    @Test
    void closingARegistryLeavesAClientItWasGivenOpen() {
        try (RelockClient client = RelockClient.builder().redisUri(redis.uriWithPassword()).build()) {
            new RelockLockRegistry(client, "app").close();

            assertThat(new RelockLockRegistry(client, "app").obtain("job").tryLock()).isTrue();
        }
    }

    @Test
    void aBlankRegistryKeyIsRefusedBeforeAnyConnection() {
        LettuceConnectionFactory nowhere = new LettuceConnectionFactory(new RedisStandaloneConfiguration(redis.host(), 1));

        assertThatThrownBy(() -> RelockLockRegistries.fromConnectionFactory(nowhere, " "))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("registryKey must not be blank");
    }

    /**
     * As an application declares the registry, with a factory that is not a bean: a bean would be started, which
     * Spring Data Redis 4.1 cannot do on the Lettuce 6.8 that these tests run on (it needs 7.x's DriverInfo).
     */
    @Configuration(proxyBeanMethods = false)
    static class RegistryConfiguration {

        @Bean
        RelockLockRegistry lockRegistry(RedisStandaloneConfiguration redis) {
            return RelockLockRegistries.fromConnectionFactory(new LettuceConnectionFactory(redis), "app");
        }
    }
}
