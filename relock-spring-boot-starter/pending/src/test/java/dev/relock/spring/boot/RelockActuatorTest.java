package dev.relock.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.relock.LockHandle;
import dev.relock.RelockClient;
import dev.relock.spring.boot.RelockLocksEndpoint.HeldLockDescriptor;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.util.ReflectionUtils;

/**
 * The actuator pieces on whichever Boot line runs the test: the locks endpoint, the health
 * indicator (reached by reflection, as its type differs between 3.5 and 4) and the metrics wiring.
 */
class RelockActuatorTest extends RelockContextTestBase {

    private ApplicationContextRunner actuatorRunner() {
        return runner.withConfiguration(AutoConfigurations.of(RelockEndpointAutoConfiguration.class,
                        RelockHealthAutoConfiguration.class, RelockBoot4HealthAutoConfiguration.class,
                        RelockMetricsAutoConfiguration.class))
                .withPropertyValues("management.endpoints.web.exposure.include=*");
    }

    @Test
    void theLocksEndpointListsTheLocksThisApplicationHolds() {
        actuatorRunner().run(context -> {
            RelockClient client = context.getBean(RelockClient.class);
            RelockLocksEndpoint endpoint = context.getBean(RelockLocksEndpoint.class);
            assertThat(endpoint.locks().locks()).isEmpty();
            Instant before = Instant.now();
            try (LockHandle held = client.lock("nightly-report").acquire()) {
                assertThat(endpoint.locks().clientId()).isEqualTo(client.clientId());
                assertThat(endpoint.locks().locks()).singleElement().satisfies(lock -> {
                    assertThat(lock.name()).isEqualTo("nightly-report");
                    assertThat(lock.fencingToken()).isEqualTo(held.fencingToken());
                    assertThat(lock.heldSince()).isBetween(before.minusSeconds(1), Instant.now());
                    assertThat(lock.remainingLeaseMillis()).isPositive();
                    assertThat(lock.renewed()).isTrue();
                });
            }
            assertThat(endpoint.locks().locks()).extracting(HeldLockDescriptor::name).isEmpty();
        });
    }

    @Test
    void theHealthIndicatorIsUpWhileRedisAnswersAndDownWhenItDoesNot() {
        actuatorRunner().withPropertyValues("relock.command-timeout=500ms").run(context -> {
            Object indicator = context.getBean("relockHealthIndicator");
            assertThat(statusOf(indicator)).isEqualTo("UP");
            redis.pause();
            try {
                assertThat(statusOf(indicator)).isEqualTo("DOWN");
            } finally {
                redis.resume();
            }
        });
    }

    @Test
    void theApplicationsMeterRegistryReachesTheClient() {
        actuatorRunner().withBean(MeterRegistry.class, SimpleMeterRegistry::new).run(context -> {
            context.getBean(RelockClient.class).lock("metered").acquire().close();
            assertThat(context.getBean(MeterRegistry.class).getMeters()).isNotEmpty();
        });
    }

    @Test
    void withoutTheActuatorNothingOfItIsConfigured() {
        actuatorRunner().withPropertyValues("management.endpoints.web.exposure.include=health").run(context ->
                assertThat(context).doesNotHaveBean(RelockLocksEndpoint.class));
    }

    private static String statusOf(Object indicator) {
        Object health = invoke(indicator, "health");
        return (String) invoke(invoke(health, "getStatus"), "getCode");
    }

    private static Object invoke(Object target, String method) {
        return ReflectionUtils.invokeMethod(ReflectionUtils.findMethod(target.getClass(), method), target);
    }
}
