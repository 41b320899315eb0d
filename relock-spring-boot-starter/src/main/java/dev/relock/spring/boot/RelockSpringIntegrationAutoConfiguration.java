package dev.relock.spring.boot;

import dev.relock.RelockClient;
import dev.relock.integration.RelockLockRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.integration.support.locks.LockRegistry;

/**
 * Declares a {@link RelockLockRegistry} over the application's {@link RelockClient} as its Spring Integration
 * {@link LockRegistry}, where Spring Integration and relock's adapter for its line are on the class path
 * (relock-spring-integration for 7.x, relock-spring-integration-6 for 6.x), unless the application declares a
 * LockRegistry of its own or sets {@code relock.spring-integration.enabled=false}. The registry's key is
 * {@code relock.spring-integration.registry-key}.
 *
 * <p>Compiled against the 6.x adapter: both adapters' {@code RelockLockRegistry} have this name and constructor, so
 * the one on the application's class path is the one created.
 */
@AutoConfiguration(after = RelockAutoConfiguration.class)
@ConditionalOnClass({LockRegistry.class, RelockLockRegistry.class})
@ConditionalOnBean(RelockClient.class)
@ConditionalOnProperty(prefix = "relock.spring-integration", name = "enabled", havingValue = "true",
        matchIfMissing = true)
public class RelockSpringIntegrationAutoConfiguration {

    /**
     * The registry; it does not own the client, whose bean closes it.
     *
     * @throws IllegalStateException if {@code relock.spring-integration.registry-key} is blank
     */
    @Bean
    @ConditionalOnMissingBean(LockRegistry.class)
    public RelockLockRegistry relockLockRegistry(RelockClient client, RelockProperties properties) {
        return new RelockLockRegistry(client, RelockProperties.requireText("relock.spring-integration.registry-key",
                properties.getSpringIntegration().getRegistryKey()));
    }
}
