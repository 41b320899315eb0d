package dev.relock.spring.boot;

import dev.relock.RelockClient;
import dev.relock.shedlock.RelockLockProvider;
import net.javacrumbs.shedlock.core.LockProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;

/**
 * Declares a {@link RelockLockProvider} over the application's {@link RelockClient} as its ShedLock
 * {@link LockProvider}, where ShedLock and relock-shedlock are on the class path, unless the application declares a
 * LockProvider of its own or sets {@code relock.shedlock.enabled=false}. Its locks are named
 * {@code relock.shedlock.name-prefix + ":" + job} and their leases are renewed while the job runs
 * ({@link RelockLockProvider.Lease#RENEWED_WHILE_RUNNING}); declare the provider yourself for the other lease.
 */
@AutoConfiguration(after = RelockAutoConfiguration.class)
@ConditionalOnClass({LockProvider.class, RelockLockProvider.class})
@ConditionalOnBean(RelockClient.class)
@ConditionalOnProperty(prefix = "relock.shedlock", name = "enabled", havingValue = "true", matchIfMissing = true)
public class RelockShedLockAutoConfiguration {

    /**
     * The provider; it does not own the client, whose bean closes it.
     *
     * @throws IllegalStateException if {@code relock.shedlock.name-prefix} is blank
     */
    @Bean
    @ConditionalOnMissingBean(LockProvider.class)
    public RelockLockProvider relockLockProvider(RelockClient client, RelockProperties properties) {
        return new RelockLockProvider(client, RelockProperties.requireText("relock.shedlock.name-prefix",
                properties.getShedlock().getNamePrefix()), RelockLockProvider.Lease.RENEWED_WHILE_RUNNING);
    }
}
