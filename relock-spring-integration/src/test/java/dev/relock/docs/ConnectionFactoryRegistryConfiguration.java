package dev.relock.docs;

import dev.relock.integration.RelockLockRegistries;
import dev.relock.integration.RelockLockRegistry;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * docs/spring.md's block for users coming from {@code RedisLockRegistry}, compiled against both lines: the region
 * between the markers is the block line for line (relock-core's DocSnippetsTest).
 */
@Configuration(proxyBeanMethods = false)
class ConnectionFactoryRegistryConfiguration {

    // snippet docs/spring.md#drop-in-adapters~2
    @Bean
    RelockLockRegistry lockRegistry(RedisConnectionFactory connectionFactory) {
        return RelockLockRegistries.fromConnectionFactory(connectionFactory, "my-app"); // was new RedisLockRegistry(...)
    }
    // snippet end
}
