package dev.relock.spring.boot;

import dev.relock.RelockClient;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;
import org.springframework.context.annotation.Bean;

/**
 * The {@code relock} health indicator on Boot 4, whose health API moved to the spring-boot-health
 * module. Compiled against that module's jar alone; the class condition is by name, so this class
 * is never loaded on Boot 3.5.
 */
@AutoConfiguration(after = RelockAutoConfiguration.class)
@ConditionalOnClass(name = "org.springframework.boot.health.contributor.AbstractHealthIndicator")
@ConditionalOnBean(RelockClient.class)
public class RelockBoot4HealthAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(name = "relockHealthIndicator")
    @ConditionalOnEnabledHealthIndicator("relock")
    public AbstractHealthIndicator relockHealthIndicator(RelockClient client) {
        return new AbstractHealthIndicator("relock health check failed") {
            @Override
            protected void doHealthCheck(Health.Builder builder) {
                builder.up().withDetails(RelockHealthDetails.of(client));
            }
        };
    }
}
