package dev.relock.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.relock.LockHandle;
import dev.relock.RedisUnavailableException;
import dev.relock.RelockClient;
import dev.relock.RelockLock;
import dev.relock.spring.DistributedLock;
import dev.relock.spring.boot.RelockLocksEndpoint.HeldLockDescriptor;
import dev.relock.testredis.RedisServer;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.util.ReflectionUtils;

/**
 * The actuator pieces on whichever Boot line runs the test: the locks endpoint, the health
 * indicator (reached by reflection, as its type differs between 3.5 and 4), the metrics wiring,
 * and a context without Micrometer or the actuator on the class path.
 */
@Tag("redis")
class RelockActuatorTest extends RelockContextTestBase {

    private static final Duration GENEROUS = Duration.ofSeconds(10);

    /** A bean with a locked method that signals once it holds the lock and returns when released. */
    public static class NightlyReport {

        @DistributedLock(name = "'nightly-report'")
        public void run(CountDownLatch entered, CountDownLatch release) throws InterruptedException {
            entered.countDown();
            if (!release.await(GENEROUS.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException("the test never released the report");
            }
        }
    }

    private ApplicationContextRunner actuatorRunner() {
        return runner.withConfiguration(AutoConfigurations.of(RelockEndpointAutoConfiguration.class,
                        RelockHealthAutoConfiguration.class, RelockBoot4HealthAutoConfiguration.class,
                        RelockMetricsAutoConfiguration.class))
                .withBean(NightlyReport.class)
                .withPropertyValues("management.endpoints.web.exposure.include=*");
    }

    @Test
    void theLocksEndpointListsTheLockOfAnAnnotatedMethodWhileItRuns() {
        actuatorRunner().run(context -> {
            RelockClient client = context.getBean(RelockClient.class);
            RelockLocksEndpoint endpoint = context.getBean(RelockLocksEndpoint.class);
            NightlyReport report = context.getBean(NightlyReport.class);
            assertThat(endpoint.locks().locks()).isEmpty();
            CountDownLatch entered = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            Instant before = Instant.now();
            AtomicReference<String> ranOn = new AtomicReference<>();
            CompletableFuture<Void> running = CompletableFuture.runAsync(() -> {
                ranOn.set(Thread.currentThread().getName());
                try {
                    report.run(entered, release);
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            long token;
            try {
                assertThat(entered.await(GENEROUS.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
                assertThat(endpoint.locks().clientId()).isEqualTo(client.clientId());
                assertThat(endpoint.locks().locks()).singleElement().satisfies(held -> {
                    assertThat(held.name()).isEqualTo("nightly-report");
                    assertThat(held.kind()).isEqualTo("exclusive");
                    assertThat(held.owner()).startsWith(client.clientId() + ":");
                    assertThat(held.heldSince()).isBetween(before, Instant.now());
                    assertThat(held.remainingLeaseMillis())
                            .isPositive().isLessThanOrEqualTo(client.settings().defaultLease().toMillis());
                    assertThat(held.renewed()).isTrue();
                    assertThat(held.fencingToken()).isPositive();
                    assertThat(held.thread()).as("the thread that ran the job").isEqualTo(ranOn.get());
                });
                assertThat(endpoint.locks().pid()).isEqualTo(ProcessHandle.current().pid());
                assertThat(endpoint.locks().connectionName()).isEqualTo(client.identity().connectionName());
                token = endpoint.locks().locks().get(0).fencingToken();
            } finally {
                release.countDown();
            }
            running.get(GENEROUS.toSeconds(), TimeUnit.SECONDS);
            assertThat(endpoint.locks().locks()).isEmpty();
            try (LockHandle next = client.lock("nightly-report").acquire()) {
                assertThat(next.fencingToken()).isGreaterThan(token);
            }
        });
    }

    /**
     * Issue 39: an application that started while Redis was down answered 500 on {@code /actuator/locks}, as the
     * endpoint asked the client for its identity and the client tried to connect for it.
     */
    @Test
    void theLocksEndpointAnswersWithoutRedisWhatTheClientKnows() {
        try (RedisServer late = RedisServer.start()) {
            late.stop();
            actuatorRunner().withPropertyValues("spring.data.redis.port=" + late.port(), "relock.command-timeout=500ms")
                    .run(context -> {
                        RelockLocksEndpoint endpoint = context.getBean(RelockLocksEndpoint.class);
                        RelockLocksEndpoint.HeldLocks beforeRedis = endpoint.locks();
                        assertThat(beforeRedis.connected()).isFalse();
                        assertThat(beforeRedis.locks()).isEmpty();
                        assertThat(beforeRedis.clientId()).as("made when the client connects").isNull();
                        assertThat(beforeRedis.pid()).isEqualTo(ProcessHandle.current().pid());

                        late.restart();
                        RelockClient client = context.getBean(RelockClient.class);
                        RelockLock lock = client.lock("while-down");
                        assertThat(lock.tryLock()).isTrue();
                        assertThat(endpoint.locks().connected()).isTrue();
                        assertThat(endpoint.locks().clientId()).isEqualTo(client.clientId());

                        late.kill();
                        RelockLocksEndpoint.HeldLocks afterRedis = endpoint.locks();
                        assertThat(afterRedis.locks()).extracting(HeldLockDescriptor::name).containsExactly("while-down");
                        assertThat(afterRedis.connected()).as("it has connected; the health indicator asks Redis")
                                .isTrue();
                    });
        }
    }

    @Test
    void theLocksEndpointIsAbsentWhenNotExposed() {
        actuatorRunner().withPropertyValues("management.endpoints.web.exposure.include=health").run(context ->
                assertThat(context).doesNotHaveBean(RelockLocksEndpoint.class));
    }

    @Test
    void theHealthIndicatorIsUpWhileRedisAnswersAndDownNamingItsAddressOnceItIsGone() {
        try (RedisServer doomed = RedisServer.start()) {
            actuatorRunner().withPropertyValues("spring.data.redis.port=" + doomed.port(), "relock.command-timeout=500ms")
                    .run(context -> {
                        Object indicator = context.getBean("relockHealthIndicator");
                        assertThat(statusOf(indicator)).isEqualTo("UP");
                        assertThat(detailsOf(indicator)).containsEntry("heldLocks", 0).containsKey("pingMillis");
                        doomed.kill();
                        assertThat(statusOf(indicator)).isEqualTo("DOWN");
                        assertThat(String.valueOf(detailsOf(indicator).get("error")))
                                .contains(doomed.host() + ":" + doomed.port());
                    });
        }
    }

    /**
     * Issue 17: the client connected at start-up, so an application did not start while Redis was down (a Spring Data
     * Redis application does, with its health DOWN). It now connects on first use.
     */
    @Test
    void theApplicationStartsWhileRedisIsDownAndLocksOnceItAnswers() {
        try (RedisServer late = RedisServer.start()) {
            late.stop();
            actuatorRunner().withPropertyValues("spring.data.redis.port=" + late.port(), "relock.command-timeout=500ms")
                    .run(context -> {
                        assertThat(context).hasNotFailed();
                        Object indicator = context.getBean("relockHealthIndicator");
                        assertThat(statusOf(indicator)).isEqualTo("DOWN");
                        assertThat(String.valueOf(detailsOf(indicator).get("error")))
                                .contains(late.host() + ":" + late.port());
                        // a view taken while Redis is down, as a bean's constructor may take it
                        RelockLock lock = context.getBean(RelockClient.class).lock("later");
                        assertThatThrownBy(lock::tryLock).isInstanceOf(RedisUnavailableException.class)
                                .hasMessageContaining(late.host() + ":" + late.port());
                        late.restart();
                        assertThat(lock.tryLock()).isTrue();
                        assertThat(late.execute("EXISTS", "relock:{later}")).isEqualTo("1");
                        assertThat(statusOf(indicator)).isEqualTo("UP");
                        lock.unlock();
                    });
        }
    }

    @Test
    void anAnnotatedCallIsMeteredInTheApplicationsMeterRegistry() {
        actuatorRunner().withBean(MeterRegistry.class, SimpleMeterRegistry::new).run(context -> {
            runAtOnce(context.getBean(NightlyReport.class));
            MeterRegistry registry = context.getBean(MeterRegistry.class);
            assertThat(registry.find("relock.acquire").tag("outcome", "acquired").timer())
                    .isNotNull().satisfies(timer -> assertThat(timer.count()).isEqualTo(1));
            assertThat(registry.find("relock.hold.time").timer())
                    .isNotNull().satisfies(timer -> assertThat(timer.count()).isEqualTo(1));
            assertThat(registry.find("relock.locks.held").gauge()).isNotNull();
        });
    }

    @Test
    void anAnnotatedCallIsObservedInTheApplicationsObservationRegistry() {
        List<String> stopped = new CopyOnWriteArrayList<>();
        actuatorRunner().withBean(ObservationRegistry.class, () -> recordingStops(stopped)).run(context -> {
            runAtOnce(context.getBean(NightlyReport.class));
            assertThat(stopped).containsExactly("relock.wait", "relock.hold");
        });
    }

    @Test
    void relockMetricsEnabledFalseKeepsTheClientOffTheRegistries() {
        List<String> stopped = new CopyOnWriteArrayList<>();
        actuatorRunner().withPropertyValues("relock.metrics.enabled=false")
                .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                .withBean(ObservationRegistry.class, () -> recordingStops(stopped))
                .run(context -> {
                    runAtOnce(context.getBean(NightlyReport.class));
                    assertThat(context).doesNotHaveBean(RelockClientBuilderCustomizer.class);
                    assertThat(context.getBean(MeterRegistry.class).getMeters()).extracting(meter -> meter.getId().getName())
                            .noneMatch(name -> name.startsWith("relock."));
                    assertThat(stopped).isEmpty();
                });
    }

    @Test
    void withoutMicrometerAndTheActuatorTheClientAndTheAnnotationStillWork() {
        actuatorRunner()
                .withClassLoader(new FilteredClassLoader("io.micrometer", "org.springframework.boot.actuate",
                        "org.springframework.boot.health"))
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(RelockClient.class)
                            .doesNotHaveBean(RelockLocksEndpoint.class)
                            .doesNotHaveBean("relockHealthIndicator")
                            .doesNotHaveBean(RelockClientBuilderCustomizer.class);
                    runAtOnce(context.getBean(NightlyReport.class));
                    assertThat(context.getBean(RelockClient.class).heldLocks()).isEmpty();
                });
    }

    @Test
    void withMicrometerObservationAloneOnlyObservationsAreWired() {
        actuatorRunner().withClassLoader(new FilteredClassLoader("io.micrometer.core")).run(context ->
                assertThat(context).hasNotFailed().hasBean("relockObservationRegistryCustomizer")
                        .doesNotHaveBean("relockMeterRegistryCustomizer"));
    }

    /** Calls the report through its proxy, without blocking it. */
    private static void runAtOnce(NightlyReport report) throws InterruptedException {
        report.run(new CountDownLatch(1), new CountDownLatch(0));
    }

    private static ObservationRegistry recordingStops(List<String> stopped) {
        ObservationRegistry registry = ObservationRegistry.create();
        registry.observationConfig().observationHandler(new ObservationHandler<>() {
            @Override
            public boolean supportsContext(Observation.Context context) {
                return true;
            }

            @Override
            public void onStop(Observation.Context context) {
                stopped.add(context.getName());
            }
        });
        return registry;
    }

    private static String statusOf(Object indicator) {
        Object health = invoke(indicator, "health");
        return (String) invoke(invoke(health, "getStatus"), "getCode");
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> detailsOf(Object indicator) {
        return (Map<String, Object>) invoke(invoke(indicator, "health"), "getDetails");
    }

    private static Object invoke(Object target, String method) {
        return ReflectionUtils.invokeMethod(ReflectionUtils.findMethod(target.getClass(), method), target);
    }
}
