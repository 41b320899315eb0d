package dev.relock.spring;

import static dev.relock.spring.DistributedLock.WhenNotAcquired.SKIP;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.relock.LockHandle;
import dev.relock.RelockClient;
import dev.relock.spring.boot.RelockClientBuilderCustomizer;
import dev.relock.spring.boot.RelockContextTestBase;
import dev.relock.spring.boot.RelockMetricsAutoConfiguration;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Issue 39: a miss of a {@code @DistributedLock(whenNotAcquired = SKIP)} method counted as
 * {@code relock.acquire{outcome=timed_out}}, which the success-rate alert reads as a failure. It counts as
 * {@code skipped}, for every kind of result; a method that throws when it misses still counts {@code timed_out}.
 */
@Tag("redis")
class SkippedCallMetricsTest extends RelockContextTestBase {

    private static final Duration HANG = Duration.ofSeconds(20);

    /** Methods of the lock "nightly" that skip their work when another holds it, one per kind of result. */
    public static class Nightly {

        @DistributedLock(name = "'nightly'", whenNotAcquired = SKIP)
        public String plain() {
            return "ran";
        }

        @DistributedLock(name = "'nightly'", whenNotAcquired = SKIP)
        public CompletableFuture<String> stage() {
            return CompletableFuture.completedFuture("ran");
        }

        @DistributedLock(name = "'nightly'", whenNotAcquired = SKIP)
        public Mono<String> mono() {
            return Mono.just("ran");
        }

        @DistributedLock(name = "'nightly'", whenNotAcquired = SKIP)
        public Flux<String> flux() {
            return Flux.just("ran");
        }

        @DistributedLock(name = "'nightly'")
        public String throwing() {
            return "ran";
        }
    }

    private static long acquisitions(MeterRegistry meters, String outcome) {
        Timer timer = meters.find("relock.acquire").tags("group", "nightly", "outcome", outcome).timer();
        return timer == null ? 0 : timer.count();
    }

    @Test
    void aSkippedCallCountsAsSkippedAndAThrowingOneAsTimedOut() {
        runner.withConfiguration(AutoConfigurations.of(RelockMetricsAutoConfiguration.class))
                .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                .withBean(RelockClientBuilderCustomizer.class, () -> builder -> builder.metricsGroup(name -> name))
                .withBean(Nightly.class)
                .run(context -> {
                    MeterRegistry meters = context.getBean(MeterRegistry.class);
                    Nightly nightly = context.getBean(Nightly.class);
                    // a hold of a handle, not of this thread: the calls below miss the lock as another owner would
                    try (LockHandle held = context.getBean(RelockClient.class).lock("nightly").acquireAsync()
                            .toCompletableFuture().get(HANG.toMillis(), TimeUnit.MILLISECONDS)) {
                        assertThat(nightly.plain()).isNull();
                        assertThat(nightly.stage()).succeedsWithin(HANG).isNull();
                        assertThat(nightly.mono().blockOptional(HANG)).isEmpty();
                        assertThat(nightly.flux().collectList().block(HANG)).isEmpty();
                        assertThat(acquisitions(meters, "skipped")).isEqualTo(4);
                        assertThat(acquisitions(meters, "timed_out")).isZero();

                        assertThatThrownBy(nightly::throwing).isInstanceOf(LockNotAcquiredException.class);
                        assertThat(acquisitions(meters, "timed_out")).isEqualTo(1);
                    }
                    assertThat(nightly.plain()).isEqualTo("ran");
                    assertThat(acquisitions(meters, "acquired")).as("the test's hold, then the call's").isEqualTo(2);
                    assertThat(acquisitions(meters, "skipped")).isEqualTo(4);
                });
    }
}
