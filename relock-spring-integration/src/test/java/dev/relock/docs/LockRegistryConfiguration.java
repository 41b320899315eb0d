package dev.relock.docs;

import dev.relock.RelockClient;
import dev.relock.integration.RelockLockRegistry;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The Spring Integration block of docs/spring.md, compiled against both lines (relock-spring-integration and
 * relock-spring-integration-6 compile these tests): the region between the markers is the block line for line
 * (relock-core's DocSnippetsTest).
 */
@Configuration(proxyBeanMethods = false)
class LockRegistryConfiguration {

    // snippet docs/spring.md#drop-in-adapters
    @Bean
    RelockLockRegistry lockRegistry(RelockClient relock) {
        return new RelockLockRegistry(relock, "my-app");   // locks named "my-app:<key>"
    }
    // snippet end
}
