package dev.relock.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.relock.RedisUnavailableException;
import dev.relock.RelockClient;
import dev.relock.RelockLock;
import dev.relock.spring.DistributedLock;
import dev.relock.testredis.RedisServer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.distribution.DistributionStatisticConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.util.ClassUtils;

/**
 * Issue 39, "Metrics and operators", in a Boot application on whichever Boot line runs the test: the node's up
 * gauge from the start while Redis is down, percentile histograms only when asked for, and no timers made of
 * relock's observations by the meter observation handler Boot's own metrics and observation auto-configuration set
 * up (a {@code DefaultMeterObservationHandler} on the application's {@code ObservationRegistry}).
 */
@Tag("redis")
class RelockMetricsAutoConfigurationTest extends RelockContextTestBase {

    private static final Duration HANG = Duration.ofSeconds(20);

    /**
     * Boot's auto-configuration of a simple meter registry, of its meter filters and of an observation registry with
     * a meter handler: on Boot 3.5 in spring-boot-actuator-autoconfigure, on Boot 4 in spring-boot-micrometer-*.
     */
    private static final List<String> BOOT_METRICS = List.of(
            "org.springframework.boot.actuate.autoconfigure.metrics.MetricsAutoConfiguration",
            "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration",
            "org.springframework.boot.actuate.autoconfigure.metrics.export.simple.SimpleMetricsExportAutoConfiguration",
            "org.springframework.boot.actuate.autoconfigure.observation.ObservationAutoConfiguration",
            "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
            "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
            "org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration",
            "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration");

    /** A bean with one locked method. */
    public static class Report {

        @DistributedLock(name = "'report'")
        public String run() {
            return "ran";
        }
    }

    /** The test's runner with Boot's metrics and observations and relock's metrics wiring. */
    private ApplicationContextRunner withBootMetrics() {
        Class<?>[] present = BOOT_METRICS.stream()
                .filter(name -> ClassUtils.isPresent(name, getClass().getClassLoader()))
                .map(name -> ClassUtils.resolveClassName(name, getClass().getClassLoader()))
                .toArray(Class<?>[]::new);
        assertThat(present).as("Boot's metrics and observation auto-configuration, of one Boot line").hasSize(4);
        return runner.withConfiguration(AutoConfigurations.of(present))
                .withConfiguration(AutoConfigurations.of(RelockMetricsAutoConfiguration.class))
                .withBean(Report.class);
    }

    private static Set<String> relockMeterNames(MeterRegistry meters) {
        return meters.getMeters().stream().map(Meter::getId).map(Meter.Id::getName)
                .filter(name -> name.startsWith("relock.")).collect(Collectors.toSet());
    }

    @Test
    void theMeterHandlersTimersOfRelocksObservationsAreDenied() {
        withBootMetrics().run(context -> {
            assertThat(context.getBean(Report.class).run()).isEqualTo("ran");
            Set<String> names = relockMeterNames(context.getBean(MeterRegistry.class));
            assertThat(names).contains("relock.acquire", "relock.hold.time", "relock.waiting", "relock.locks.held")
                    .doesNotContainAnyElementsOf(RelockMetricsAutoConfiguration.Meters.OBSERVATION_TIMERS);
        });
    }

    @Test
    void observationTimersTrueLetsTheMeterHandlerMakeThem() {
        withBootMetrics().withPropertyValues("relock.metrics.observation-timers=true").run(context -> {
            assertThat(context.getBean(Report.class).run()).isEqualTo("ran");
            assertThat(relockMeterNames(context.getBean(MeterRegistry.class)))
                    .contains("relock.acquire", "relock.wait", "relock.wait.active", "relock.hold",
                            "relock.hold.active");
        });
    }

    @Test
    void timersPublishPercentileHistogramsOnlyWhenAsked() {
        Map<String, Boolean> histogramOf = new ConcurrentHashMap<>();
        ApplicationContextRunner metrics = runner
                .withConfiguration(AutoConfigurations.of(RelockMetricsAutoConfiguration.class))
                .withBean(MeterRegistry.class, () -> recordingHistogramSettings(histogramOf))
                .withBean(Report.class);
        metrics.run(context -> {
            context.getBean(Report.class).run();
            assertThat(histogramOf).containsKeys("relock.acquire", "relock.hold.time").doesNotContainValue(true);
        });
        histogramOf.clear();
        metrics.withPropertyValues("relock.metrics.histograms=true").run(context -> {
            context.getBean(Report.class).run();
            assertThat(histogramOf).containsEntry("relock.acquire", true).containsEntry("relock.hold.time", true);
        });
    }

    /**
     * A registry that notes, per relock timer, whether it was built with a percentile histogram (a simple registry
     * publishes no buckets, so its snapshots cannot tell).
     */
    private static MeterRegistry recordingHistogramSettings(Map<String, Boolean> histogramOf) {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        registry.config().meterFilter(new MeterFilter() {
            @Override
            public DistributionStatisticConfig configure(Meter.Id id, DistributionStatisticConfig config) {
                if (id.getType() == Meter.Type.TIMER && id.getName().startsWith("relock.")) {
                    histogramOf.merge(id.getName(), Boolean.TRUE.equals(config.isPercentileHistogram()),
                            Boolean::logicalOr);
                }
                return config;
            }
        });
        return registry;
    }

    @Test
    void anApplicationStartedWhileRedisIsDownReportsItsNodeDownFromTheStart() {
        try (RedisServer late = RedisServer.start()) {
            late.stop();
            runner.withConfiguration(AutoConfigurations.of(RelockMetricsAutoConfiguration.class))
                    .withPropertyValues("spring.data.redis.port=" + late.port(), "relock.command-timeout=500ms")
                    .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                    .run(context -> {
                        MeterRegistry meters = context.getBean(MeterRegistry.class);
                        Gauge up = meters.find("relock.node.up").tags("node", late.host() + ":" + late.port())
                                .gauge();
                        assertThat(up).as("the node's up gauge before any call").isNotNull();
                        assertThat(up.value()).isZero();
                        late.restart();
                        RelockLock lock = context.getBean(RelockClient.class).lock("after");
                        // in this thread, which then holds the lock
                        await("the client connected").atMost(HANG).pollInSameThread().until(() -> tryLock(lock));
                        assertThat(up.value()).isEqualTo(1);
                        lock.unlock();
                    });
        }
    }

    private static boolean tryLock(RelockLock lock) {
        try {
            return lock.tryLock();
        } catch (RedisUnavailableException e) {
            return false;
        }
    }
}
