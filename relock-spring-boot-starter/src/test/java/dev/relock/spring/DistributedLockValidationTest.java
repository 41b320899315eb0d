package dev.relock.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.relock.spring.DistributedLock.WhenNotAcquired;
import dev.relock.spring.boot.RelockContextTestBase;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import reactor.core.publisher.Flux;
import reactor.core.publisher.ParallelFlux;

/** A {@link DistributedLock} that cannot work stops the start-up with a message naming the method. */
@Tag("redis")
class DistributedLockValidationTest extends RelockContextTestBase {

    public static class BadExpression {
        @DistributedLock(name = "'order:' + #id +")
        public void run(String id) {}
    }

    public static class UnknownParameter {
        @DistributedLock(name = "'order:' + #orderId")
        public void run(String id) {}
    }

    public static class MissingFallback {
        @DistributedLock(name = "#p0", whenNotAcquired = WhenNotAcquired.FALLBACK, fallback = "later")
        public String run(String id) {
            return id;
        }

        public String later(String id, int retries) {
            return id;
        }
    }

    public static class FallbackOfAnotherType {
        @DistributedLock(name = "#p0", whenNotAcquired = WhenNotAcquired.FALLBACK, fallback = "later")
        public String run(String id) {
            return id;
        }

        public Integer later(String id) {
            return 1;
        }
    }

    public static class FallbackWithoutFallbackMode {
        @DistributedLock(name = "#p0", fallback = "later")
        public void run(String id) {}

        public void later(String id) {}
    }

    public static class SkippedPrimitive {
        @DistributedLock(name = "#p0", whenNotAcquired = WhenNotAcquired.SKIP)
        public int run(String id) {
            return 1;
        }
    }

    public static class BadDuration {
        @DistributedLock(name = "#p0", waitFor = "two seconds")
        public void run(String id) {}
    }

    public static class FutureResult {
        @DistributedLock(name = "#p0")
        public Future<String> run(String id) {
            return CompletableFuture.completedFuture(id);
        }
    }

    public static class ParallelFluxResult {
        @DistributedLock(name = "#p0")
        public ParallelFlux<String> run(String id) {
            return Flux.just(id).parallel();
        }
    }

    @Test
    void aBadExpressionIsReportedWithItsMethod() {
        assertStartUpFails(BadExpression.class, "name is not a SpEL expression");
    }

    @Test
    void aVariableThatIsNoParameterIsReported() {
        assertStartUpFails(UnknownParameter.class, "refers to [#orderId], not a parameter of the method");
    }

    @Test
    void aMissingFallbackIsReported() {
        assertStartUpFails(MissingFallback.class, "fallback method later(String) not found in "
                + MissingFallback.class.getName());
    }

    @Test
    void aFallbackReturningAnotherTypeIsReported() {
        assertStartUpFails(FallbackOfAnotherType.class, "fallback method later returns java.lang.Integer");
    }

    @Test
    void aFallbackNamedWithoutFallbackModeIsReported() {
        assertStartUpFails(FallbackWithoutFallbackMode.class, "whenNotAcquired is THROW, not FALLBACK");
    }

    @Test
    void skippingAMethodThatReturnsAPrimitiveIsReported() {
        assertStartUpFails(SkippedPrimitive.class, "a method returning int cannot be skipped");
    }

    @Test
    void aBadDurationIsReported() {
        assertStartUpFails(BadDuration.class, "waitFor 'two seconds' is not a duration");
    }

    /**
     * A Future tells nobody when its work ends, so the lock would be released before it does. CompletionStage,
     * CompletableFuture, Mono and Flux are held until they end: {@code AsyncResultsTest}.
     */
    @Test
    void aFutureResultIsReported() {
        assertStartUpFails(FutureResult.class, "returns java.util.concurrent.Future, which tells nobody when its "
                + "work ends");
    }

    /** A Publisher the interceptor cannot return a Mono or Flux in place of. */
    @Test
    void aPublisherOtherThanMonoOrFluxIsReported() {
        assertStartUpFails(ParallelFluxResult.class, "returns reactor.core.publisher.ParallelFlux, a Publisher "
                + "the lock cannot stand in for: declare Mono, Flux or Publisher");
    }

    /**
     * Issue 17: the failure arrived wrapped ("Unexpected AOP exception", or the bean factory's "Error creating bean");
     * Boot's failure analysis, as a real SpringApplication prints it, now names the method and what to change.
     */
    @Test
    @ExtendWith(OutputCaptureExtension.class)
    void theFailureAnalysisNamesTheMethodAndWhatToChange(CapturedOutput output) {
        SpringApplication application = new SpringApplication(BadDurationApplication.class);
        application.setWebApplicationType(WebApplicationType.NONE);
        assertThatThrownBy(() -> application.run("--spring.data.redis.host=" + redis.host(),
                "--spring.data.redis.port=" + redis.port(), "--spring.main.banner-mode=off"))
                .isNotInstanceOf(InvalidDistributedLockException.class);
        assertThat(output).contains("APPLICATION FAILED TO START")
                .contains("@DistributedLock on " + BadDuration.class.getName()
                        + ".run(String): waitFor 'two seconds' is not a duration such as 500ms, 2s or PT1M")
                .contains("Change the @DistributedLock on " + BadDuration.class.getName() + ".run: waitFor");
    }

    @Configuration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    @Import(BadDuration.class)
    static class BadDurationApplication {}

    private void assertStartUpFails(Class<?> beanClass, String problem) {
        runner.withBean(beanClass).run(context -> {
            assertThat(context).hasFailed();
            String method = "@DistributedLock on " + beanClass.getName() + ".run(String): ";
            Throwable reported = context.getStartupFailure();
            while (reported != null && !(reported instanceof InvalidDistributedLockException
                    && reported.getMessage().startsWith(method))) {
                reported = reported.getCause();
            }
            assertThat(reported).as("the failure naming the method").isNotNull();
            assertThat(reported.getMessage()).contains(problem);
        });
    }
}
