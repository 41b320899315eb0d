package dev.relock.spring.boot;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;

/**
 * Gives the auto-configured client the application's Micrometer {@link MeterRegistry} and
 * {@link ObservationRegistry}, where the application has them (Boot's actuator makes both). The
 * registries are looked up when the client is built, after every bean is defined, so this needs no
 * ordering against Boot's metrics auto-configuration, whose class names differ between 3.5 and 4.
 * To group lock names in metrics, declare a {@link RelockClientBuilderCustomizer} that calls
 * {@code metricsGroup}.
 */
@AutoConfiguration(before = RelockAutoConfiguration.class)
@ConditionalOnClass(MeterRegistry.class)
@ConditionalOnProperty(prefix = "relock", name = "enabled", havingValue = "true", matchIfMissing = true)
public class RelockMetricsAutoConfiguration {

    @Bean
    RelockClientBuilderCustomizer relockMicrometerCustomizer(ObjectProvider<MeterRegistry> meterRegistry,
            ObjectProvider<ObservationRegistry> observationRegistry) {
        return builder -> {
            meterRegistry.ifUnique(builder::meterRegistry);
            observationRegistry.ifUnique(builder::observationRegistry);
        };
    }
}
