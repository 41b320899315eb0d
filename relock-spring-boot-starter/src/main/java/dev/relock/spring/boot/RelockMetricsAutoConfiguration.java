package dev.relock.spring.boot;

import dev.relock.RelockObservationContext;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.observation.ObservationRegistry;
import java.util.Set;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
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
 * <p>Timers publish percentile histograms only with {@code relock.metrics.histograms=true}. The timers that Boot's
 * meter observation handler would make of relock's observations, which repeat relock's own meters, are denied by a
 * {@link MeterFilter} (Boot applies every MeterFilter bean to its registries) unless
 * {@code relock.metrics.observation-timers=true}; the observations still reach the tracing handlers.
 *
 * <p>Each registry type has its own nested configuration behind a class condition on it: the
 * builder's {@code meterRegistry} and {@code observationRegistry} methods name Micrometer types,
 * so they are called only where those types can be loaded. micrometer-core and
 * micrometer-observation are separate jars, and an application may have the second alone.
 */
@AutoConfiguration(before = RelockAutoConfiguration.class)
@ConditionalOnProperty(prefix = "relock.metrics", name = "enabled", havingValue = "true", matchIfMissing = true)
@EnableConfigurationProperties(RelockProperties.class)
public class RelockMetricsAutoConfiguration {

    /** Meters: present when micrometer-core is. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "io.micrometer.core.instrument.MeterRegistry")
    static class Meters {

        /**
         * The names of the meters Micrometer's {@code DefaultMeterObservationHandler} makes of relock's observations:
         * a timer per observation and a long task timer of those under way.
         */
        static final Set<String> OBSERVATION_TIMERS = Set.of(RelockObservationContext.WAIT,
                RelockObservationContext.WAIT + ".active", RelockObservationContext.HOLD,
                RelockObservationContext.HOLD + ".active");

        @Bean
        RelockClientBuilderCustomizer relockMeterRegistryCustomizer(ObjectProvider<MeterRegistry> meterRegistry,
                RelockProperties properties) {
            return builder -> {
                meterRegistry.ifUnique(builder::meterRegistry);
                // only when asked: unset, a customizer of the application's that turns them on is not undone
                if (properties.getMetrics().isHistograms()) {
                    builder.metricsHistograms(true);
                }
            };
        }

        @Bean
        @ConditionalOnClass(name = "io.micrometer.observation.ObservationRegistry")
        @ConditionalOnProperty(prefix = "relock.metrics", name = "observation-timers", havingValue = "false",
                matchIfMissing = true)
        MeterFilter relockObservationTimersFilter() {
            return MeterFilter.deny(id -> OBSERVATION_TIMERS.contains(id.getName()));
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
