package dev.relock.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.relock.RelockClient;
import dev.relock.integration.RelockLockRegistry;
import dev.relock.testredis.RedisServer;
import java.util.concurrent.locks.Lock;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.integration.support.locks.DefaultLockRegistry;
import org.springframework.integration.support.locks.LockRegistry;

/**
 * The auto-configured Spring Integration {@link LockRegistry}: relock's registry over the auto-configured client
 * where Spring Integration and relock's adapter are on the class path, and none where the application has its own
 * registry, lacks either library, or turns it off. These tests run on Boot 3.5 with Spring Integration 6.5 and
 * relock-spring-integration-6 (this module), and on Boot 4 with Spring Integration 7 and relock-spring-integration
 * (relock-spring-boot-starter-boot4-tests).
 */
@Tag("redis")
class RelockSpringIntegrationAutoConfigurationTest extends RelockContextTestBase {

    private ApplicationContextRunner withRegistry() {
        return runner.withConfiguration(AutoConfigurations.of(RelockSpringIntegrationAutoConfiguration.class));
    }

    @Test
    void theRegistryIsRelocksAndItsLocksAreRelockLocks() {
        withRegistry().run(context -> {
            assertThat(context).hasSingleBean(LockRegistry.class);
            assertThat(context.getBean(LockRegistry.class)).isInstanceOf(RelockLockRegistry.class);
            Lock lock = context.getBean(LockRegistry.class).obtain("job");
            assertThat(lock.tryLock()).isTrue();
            try {
                assertThat(context.getBean(RelockClient.class).lock("lock-registry:job").isLocked()).isTrue();
            } finally {
                lock.unlock();
            }
        });
    }

    @Test
    void theRegistryKeyIsAProperty() {
        withRegistry().withPropertyValues("relock.spring-integration.registry-key=orders").run(context ->
                assertThat(context.getBean(RelockLockRegistry.class).lockName("42")).isEqualTo("orders:42"));
    }

    @Test
    void itsTextDoesNotConnectAClientThatHasNotConnectedYet() {
        try (RedisServer down = RedisServer.start()) {
            down.stop();
            withRegistry().withPropertyValues("spring.data.redis.port=" + down.port(), "relock.command-timeout=500ms")
                    .run(context -> assertThat(context.getBean(LockRegistry.class).toString())
                            .startsWith("RelockLockRegistry{registryKey=lock-registry").contains("not connected yet"));
        }
    }

    @Test
    void aBlankRegistryKeyFailsTheStartUpNamingTheProperty() {
        withRegistry().withPropertyValues("relock.spring-integration.registry-key= ").run(context ->
                assertThat(context).getFailure().rootCause().isInstanceOf(IllegalStateException.class)
                        .hasMessageStartingWith("relock.spring-integration.registry-key must not be blank"));
    }

    @Test
    void anApplicationsRegistryWins() {
        withRegistry().withBean("ownRegistry", LockRegistry.class, DefaultLockRegistry::new).run(context -> {
            assertThat(context).hasSingleBean(LockRegistry.class);
            assertThat(context.getBean(LockRegistry.class)).isInstanceOf(DefaultLockRegistry.class);
        });
    }

    @Test
    void noRegistryWithoutSpringIntegrationOrRelocksAdapter() {
        withRegistry().withClassLoader(new FilteredClassLoader(LockRegistry.class)).run(context -> {
            assertThat(context).hasSingleBean(RelockClient.class);
            assertThat(context).doesNotHaveBean("relockLockRegistry");
        });
        withRegistry().withClassLoader(new FilteredClassLoader(RelockLockRegistry.class)).run(context -> {
            assertThat(context).hasSingleBean(RelockClient.class);
            assertThat(context).doesNotHaveBean(LockRegistry.class);
        });
    }

    @Test
    void noRegistryWhenTurnedOffOrWithoutARelockClient() {
        withRegistry().withPropertyValues("relock.spring-integration.enabled=false").run(context -> {
            assertThat(context).hasSingleBean(RelockClient.class);
            assertThat(context).doesNotHaveBean(LockRegistry.class);
        });
        withRegistry().withPropertyValues("relock.enabled=false").run(context ->
                assertThat(context).doesNotHaveBean(LockRegistry.class));
    }
}
