package dev.relock.spring.boot;

import dev.relock.RelockClient;
import org.springframework.boot.actuate.autoconfigure.health.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.actuate.health.AbstractHealthIndicator;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * The {@code relock} health indicator on Boot 3.5, whose health API lives in the actuator. Boot 4
 * moved it; {@link RelockBoot4HealthAutoConfiguration} serves that line. The class condition is by
 * name, so this class is never loaded where the 3.5 API is missing.
 */
@AutoConfiguration(after = RelockAutoConfiguration.class)
@ConditionalOnClass(name = "org.springframework.boot.actuate.health.AbstractHealthIndicator")
@ConditionalOnBean(RelockClient.class)
public class RelockHealthAutoConfiguration {

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
