package dev.relock.docs;

import dev.relock.RelockClient;
import dev.relock.shedlock.RelockLockProvider;
import net.javacrumbs.shedlock.core.LockProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The ShedLock block of docs/spring.md, compiled here because a {@code @Bean} needs Spring, which relock-shedlock's
 * class path lacks: the region between the markers is the block line for line (relock-core's DocSnippetsTest).
 */
@Configuration(proxyBeanMethods = false)
class LockProviderConfiguration {

    // snippet docs/spring.md#drop-in-adapters~3
    @Bean
    LockProvider lockProvider(RelockClient relock) {
        return new RelockLockProvider(relock);   // locks named "shedlock:<job>"
    }
    // snippet end
}
