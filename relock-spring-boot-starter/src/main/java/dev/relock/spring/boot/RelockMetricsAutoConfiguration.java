package dev.relock.spring.boot;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Gives the auto-configured client the application's Micrometer {@link MeterRegistry} and
 * {@link ObservationRegistry}, where the application has one of each (Boot's actuator makes both),
 * unless {@code relock.metrics.enabled=false}. The registries are looked up when the client is
 * built, after every bean is defined, so this needs no ordering against Boot's metrics
 * auto-configuration, whose class names differ between 3.5 and 4. To group lock names in metrics,
 * declare a {@link RelockClientBuilderCustomizer} that calls {@code metricsGroup}.
 *
 * <p>Each registry type has its own nested configuration behind a class condition on it: the
 * builder's {@code meterRegistry} and {@code observationRegistry} methods name Micrometer types,
 * so they are called only where those types can be loaded. micrometer-core and
 * micrometer-observation are separate jars, and an application may have the second alone.
 */
@AutoConfiguration(before = RelockAutoConfiguration.class)
@ConditionalOnProperty(prefix = "relock.metrics", name = "enabled", havingValue = "true", matchIfMissing = true)
public class RelockMetricsAutoConfiguration {

    /** Meters: present when micrometer-core is. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "io.micrometer.core.instrument.MeterRegistry")
    static class Meters {

        @Bean
        RelockClientBuilderCustomizer relockMeterRegistryCustomizer(ObjectProvider<MeterRegistry> meterRegistry) {
            return builder -> meterRegistry.ifUnique(builder::meterRegistry);
        }
    }

    /** Observations: present when micrometer-observation is. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "io.micrometer.observation.ObservationRegistry")
    static class Observations {

        @Bean
        RelockClientBuilderCustomizer relockObservationRegistryCustomizer(
                ObjectProvider<ObservationRegistry> observationRegistry) {
            return builder -> observationRegistry.ifUnique(builder::observationRegistry);
        }
    }
}
