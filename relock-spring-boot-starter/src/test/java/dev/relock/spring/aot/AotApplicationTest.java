package dev.relock.spring.aot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.relock.RelockClient;
import dev.relock.RelockLock;
import dev.relock.spring.boot.RelockLocksEndpoint;
import dev.relock.spring.boot.RelockProperties;
import dev.relock.testredis.RedisServer;
import java.lang.reflect.Method;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.aop.support.AopUtils;
import org.springframework.aot.AotDetector;
import org.springframework.aot.hint.MemberCategory;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.TypeReference;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.aot.test.generate.TestGenerationContext;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringApplicationHook;
import org.springframework.boot.SpringApplicationRunListener;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.aot.ApplicationContextAotGenerator;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.core.test.tools.CompileWithForkedClassLoader;
import org.springframework.core.test.tools.Compiled;
import org.springframework.core.test.tools.TestCompiler;
import org.springframework.javapoet.ClassName;
import org.springframework.util.function.ThrowingConsumer;

/**
 * {@link AotApplication} as a Spring Boot AOT build leaves it and {@code -Dspring.aot.enabled=true} runs it on the
 * JVM: its context processed ahead of time (conditions decided, bean definitions, proxy classes and hints written
 * out), the generated sources compiled, and the application started from them alone, against a fixture Redis. A
 * second client, outside the application, sees the lock of its {@code @DistributedLock} method held while the
 * method runs.
 *
 * <p>The generated classes live in the packages of the classes they build and may use their package-private members,
 * so the test runs in a class loader of its own that defines the generated classes beside them
 * ({@link CompileWithForkedClassLoader}); it starts its Redis inside the test method, which runs in that loader.
 */
@Tag("redis")
class AotApplicationTest {

    private static final String DAY = "2026-11-29";

    @Test
    @CompileWithForkedClassLoader
    void theLockOfALockedMethodIsHeldInTheApplicationStartedFromItsAotGeneratedCode() throws Exception {
        try (RedisServer redis = RedisServer.start()) {
            String[] args = {"--spring.data.redis.host=" + redis.host(), "--spring.data.redis.port=" + redis.port(),
                    "--spring.main.web-application-type=none", "--management.endpoints.web.exposure.include=locks"};
            TestGenerationContext generated = new TestGenerationContext(AotApplication.class);
            ClassName initializer = new ApplicationContextAotGenerator().processAheadOfTime(
                    preparedForRefresh(args), generated);
            assertThat(initializer.reflectionName())
                    .isEqualTo(AotApplication.class.getName() + "__ApplicationContextInitializer");
            assertHintedForTheImage(generated.getRuntimeHints());
            generated.writeGeneratedContent();

            ThrowingConsumer<Compiled> startFromGeneratedCode = compiled -> {
                System.setProperty(AotDetector.AOT_ENABLED, "true");
                try (ConfigurableApplicationContext context = application().run(args)) {
                    // what SpringApplication creates in AOT mode, with no bean definitions but the generated ones
                    assertThat(context).isNotInstanceOf(AnnotationConfigApplicationContext.class);
                    NightlyReport report = context.getBean(NightlyReport.class);
                    assertThat(AopUtils.isCglibProxy(report)).isTrue();
                    assertHeldWhileItRuns(report, context.getBean(RelockClient.class).clientId(), redis);
                } finally {
                    System.clearProperty(AotDetector.AOT_ENABLED);
                }
            };
            TestCompiler.forSystem().with(generated).compile(startFromGeneratedCode);
        }
    }

    /**
     * The hints the build records for the starter: its own, found through the auto-configuration and aot.factories,
     * and those Spring Boot's processors give its configuration properties, endpoint and failure analyzer.
     */
    private static void assertHintedForTheImage(RuntimeHints hints) throws NoSuchMethodException {
        assertThat(RuntimeHintsPredicates.resource().forResource("dev/relock/internal/script/single/acquire.lua"))
                .accepts(hints);
        assertThat(RuntimeHintsPredicates.proxies().forInterfaces(RelockClient.class)).accepts(hints);
        assertThat(invocable(NightlyReport.class.getMethod("write", String.class, CountDownLatch.class,
                CountDownLatch.class))).accepts(hints);

        assertThat(invocable(RelockProperties.class.getMethod("setKeyPrefix", String.class))).accepts(hints);
        assertThat(invocable(RelockLocksEndpoint.HeldLocks.class.getMethod("clientId"))).accepts(hints);
        assertThat(invocable(RelockLocksEndpoint.HeldLockDescriptor.class.getMethod("fencingToken"))).accepts(hints);
        assertThat(RuntimeHintsPredicates.reflection()
                .onType(TypeReference.of("dev.relock.spring.boot.InvalidDistributedLockFailureAnalyzer"))
                .withMemberCategory(MemberCategory.INVOKE_DECLARED_CONSTRUCTORS)).accepts(hints);
    }

    @SuppressWarnings("removal") // onMethod: Spring 7 offers onMethodInvocation, which Spring 6.2 lacks
    private static Predicate<RuntimeHints> invocable(Method method) {
        return RuntimeHintsPredicates.reflection().onMethod(method).invoke();
    }

    /** Another client sees the day's lock held by the application's client while the report is written, then free. */
    private static void assertHeldWhileItRuns(NightlyReport report, String applicationClientId, RedisServer redis)
            throws Exception {
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        ExecutorService caller = Executors.newSingleThreadExecutor();
        try (RelockClient outsider = RelockClient.builder().redisUri(redis.uri()).build()) {
            Future<String> written = caller.submit(() -> report.write(DAY, running, finish));
            assertThat(running.await(NightlyReport.HANG_SECONDS, TimeUnit.SECONDS)).isTrue();

            RelockLock lock = outsider.lock("report:" + DAY);
            assertThat(lock.isLocked()).isTrue();
            assertThat(lock.tryLock()).isFalse();
            assertThat(outsider.inspect("report:" + DAY).holders().keySet())
                    .singleElement().asString().startsWith(applicationClientId + ":");

            finish.countDown();
            assertThat(written.get(NightlyReport.HANG_SECONDS, TimeUnit.SECONDS)).isEqualTo(DAY);
            assertThat(lock.isLocked()).isFalse();
        } finally {
            finish.countDown();
            caller.shutdown();
            assertThat(caller.awaitTermination(NightlyReport.HANG_SECONDS, TimeUnit.SECONDS)).isTrue();
        }
    }

    /**
     * The application's context as {@link SpringApplication} prepares it from {@code args}, stopped before its refresh:
     * what an AOT build processes (as Boot's own AOT processor does, through a hook).
     */
    private static GenericApplicationContext preparedForRefresh(String[] args) {
        SpringApplicationHook stopBeforeRefresh = application -> new SpringApplicationRunListener() {
            @Override
            public void contextLoaded(ConfigurableApplicationContext context) {
                throw new SpringApplication.AbandonedRunException(context);
            }
        };
        try {
            SpringApplication.withHook(stopBeforeRefresh, () -> {
                application().run(args);
            });
        } catch (SpringApplication.AbandonedRunException stopped) {
            return (GenericApplicationContext) stopped.getApplicationContext();
        }
        throw new AssertionError("the application was refreshed instead of stopping before its refresh");
    }

    private static SpringApplication application() {
        SpringApplication application = new SpringApplication(AotApplication.class);
        // else the main class found on the stack, the test runner's, whose generated initializer would be looked for
        application.setMainApplicationClass(AotApplication.class);
        return application;
    }
}
