package dev.relock.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.relock.RelockClient;
import dev.relock.shedlock.RelockLockProvider;
import dev.relock.testredis.RedisServer;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The auto-configured ShedLock {@link LockProvider}: relock's provider over the auto-configured client where ShedLock
 * and relock-shedlock are on the class path, and none where the application has its own provider, lacks either
 * library, or turns it off. Run on Boot 3.5 here and on Boot 4 by relock-spring-boot-starter-boot4-tests.
 */
@Tag("redis")
class RelockShedLockAutoConfigurationTest extends RelockContextTestBase {

    private ApplicationContextRunner withProvider() {
        return runner.withConfiguration(AutoConfigurations.of(RelockShedLockAutoConfiguration.class));
    }

    @Test
    void theProviderIsRelocksAndItsLocksAreRelockLocks() {
        withProvider().run(context -> {
            assertThat(context).hasSingleBean(LockProvider.class);
            assertThat(context.getBean(LockProvider.class)).isInstanceOf(RelockLockProvider.class);
            Optional<SimpleLock> held = context.getBean(LockProvider.class).lock(job("nightly"));
            assertThat(held).isPresent();
            try {
                assertThat(context.getBean(RelockClient.class).lock("shedlock:nightly").isLocked()).isTrue();
                assertThat(context.getBean(LockProvider.class).lock(job("nightly"))).as("held, not reentrant").isEmpty();
            } finally {
                held.get().unlock();
            }
        });
    }

    @Test
    void theNamePrefixIsAProperty() {
        withProvider().withPropertyValues("relock.shedlock.name-prefix=jobs").run(context ->
                assertThat(context.getBean(RelockLockProvider.class).lockName("nightly")).isEqualTo("jobs:nightly"));
    }

    @Test
    void itsTextDoesNotConnectAClientThatHasNotConnectedYet() {
        try (RedisServer down = RedisServer.start()) {
            down.stop();
            withProvider().withPropertyValues("spring.data.redis.port=" + down.port(), "relock.command-timeout=500ms")
                    .run(context -> assertThat(context.getBean(LockProvider.class).toString())
                            .startsWith("RelockLockProvider{namePrefix=shedlock").contains("not connected yet"));
        }
    }

    @Test
    void aBlankNamePrefixFailsTheStartUpNamingTheProperty() {
        withProvider().withPropertyValues("relock.shedlock.name-prefix= ").run(context ->
                assertThat(context).getFailure().rootCause().isInstanceOf(IllegalStateException.class)
                        .hasMessageStartingWith("relock.shedlock.name-prefix must not be blank"));
    }

    @Test
    void anApplicationsProviderWins() {
        LockProvider own = configuration -> Optional.empty();
        withProvider().withBean("ownProvider", LockProvider.class, () -> own).run(context -> {
            assertThat(context).hasSingleBean(LockProvider.class);
            assertThat(context.getBean(LockProvider.class)).isSameAs(own);
        });
    }

    @Test
    void noProviderWithoutShedLockOrRelockShedlock() {
        withProvider().withClassLoader(new FilteredClassLoader(LockProvider.class)).run(context -> {
            assertThat(context).hasSingleBean(RelockClient.class);
            assertThat(context).doesNotHaveBean("relockLockProvider");
        });
        withProvider().withClassLoader(new FilteredClassLoader(RelockLockProvider.class)).run(context -> {
            assertThat(context).hasSingleBean(RelockClient.class);
            assertThat(context).doesNotHaveBean(LockProvider.class);
        });
    }

    @Test
    void noProviderWhenTurnedOffOrWithoutARelockClient() {
        withProvider().withPropertyValues("relock.shedlock.enabled=false").run(context -> {
            assertThat(context).hasSingleBean(RelockClient.class);
            assertThat(context).doesNotHaveBean(LockProvider.class);
        });
        withProvider().withPropertyValues("relock.enabled=false").run(context ->
                assertThat(context).doesNotHaveBean(LockProvider.class));
    }

    private static LockConfiguration job(String name) {
        return new LockConfiguration(Instant.now(), name, Duration.ofMinutes(1), Duration.ZERO);
    }
}
