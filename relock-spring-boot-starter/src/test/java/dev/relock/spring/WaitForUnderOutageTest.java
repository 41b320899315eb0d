package dev.relock.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.relock.RedisUnavailableException;
import dev.relock.spring.boot.RelockClientBuilderCustomizer;
import dev.relock.spring.boot.RelockContextTestBase;
import dev.relock.spring.boot.RelockMetricsAutoConfiguration;
import dev.relock.testredis.RedisServer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Issue 39: {@code @DistributedLock(waitFor = ...)} failed at once while Redis could not be reached, for every return
 * type, instead of trying again within its wait. Each test stops its own fixture Redis: after the client connected
 * (its calls are then refused at once), or before the application started (the client then connects on first use).
 */
@Tag("redis")
class WaitForUnderOutageTest extends RelockContextTestBase {

    /** A bound that only a hang exceeds. */
    private static final Duration HANG = Duration.ofSeconds(20);

    /** Locked methods with a wait longer than any outage here, one per kind of result. */
    public static class LongWait {

        @DistributedLock(name = "'outage:' + #kind", waitFor = "30s")
        public String plain(String kind) {
            return "ran " + kind;
        }

        @DistributedLock(name = "'outage:' + #kind", waitFor = "30s")
        public CompletableFuture<String> stage(String kind) {
            return CompletableFuture.completedFuture("ran " + kind);
        }

        @DistributedLock(name = "'outage:' + #kind", waitFor = "30s")
        public Mono<String> mono(String kind) {
            return Mono.just("ran " + kind);
        }

        @DistributedLock(name = "'outage:' + #kind", waitFor = "30s")
        public Flux<String> flux(String kind) {
            return Flux.just("ran " + kind);
        }
    }

    /** The same with a wait that the outage outlasts. */
    public static class ShortWait {

        static final Duration WAIT = Duration.ofSeconds(1);

        @DistributedLock(name = "'outage:' + #kind", waitFor = "1s")
        public String plain(String kind) {
            return "ran " + kind;
        }

        @DistributedLock(name = "'outage:' + #kind", waitFor = "1s")
        public CompletableFuture<String> stage(String kind) {
            return CompletableFuture.completedFuture("ran " + kind);
        }

        @DistributedLock(name = "'outage:' + #kind", waitFor = "1s")
        public Mono<String> mono(String kind) {
            return Mono.just("ran " + kind);
        }

        @DistributedLock(name = "'outage:' + #kind", waitFor = "1s")
        public Flux<String> flux(String kind) {
            return Flux.just("ran " + kind);
        }
    }

    /** The four calls of {@code bean}, started now, each as a future of its method's value. */
    private static Map<String, CompletableFuture<String>> callEach(LongWait bean) {
        Map<String, CompletableFuture<String>> calls = new LinkedHashMap<>();
        calls.put("plain", CompletableFuture.supplyAsync(() -> bean.plain("plain")));
        calls.put("stage", bean.stage("stage"));
        calls.put("mono", bean.mono("mono").toFuture());
        calls.put("flux", bean.flux("flux").single().toFuture());
        return calls;
    }

    @Test
    void aWaitTriesAgainWhileRedisIsDownAndTheMethodRunsOnceRedisIsBack() {
        try (RedisServer outage = RedisServer.start()) {
            runner.withConfiguration(AutoConfigurations.of(RelockMetricsAutoConfiguration.class))
                    .withPropertyValues("spring.data.redis.port=" + outage.port(), "relock.command-timeout=500ms")
                    .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                    .withBean(RelockClientBuilderCustomizer.class, () -> builder -> builder.metricsGroup(name -> name))
                    .withBean(LongWait.class)
                    .run(context -> {
                        MeterRegistry meters = context.getBean(MeterRegistry.class);
                        outage.stop();
                        Map<String, CompletableFuture<String>> calls = callEach(context.getBean(LongWait.class));
                        // every call's acquisition is under way while Redis is down, so its tries met the outage (a
                        // wait of relock-core tries again within itself: none of them fails)
                        await("an acquisition of each kind under way").atMost(HANG).untilAsserted(() ->
                                assertThat(calls.keySet()).allSatisfy(kind ->
                                        assertThat(waitingAcquisitions(meters, "outage:" + kind)).isPositive()));
                        assertThat(calls.values()).noneMatch(CompletableFuture::isDone);
                        outage.restart();
                        calls.forEach((kind, call) ->
                                assertThat(call).succeedsWithin(HANG).isEqualTo("ran " + kind));
                        // one call, one acquisition: its failed tries are not counted apiece
                        assertThat(calls.keySet()).allSatisfy(kind -> {
                            assertThat(acquisitions(meters, "outage:" + kind, "failed")).isZero();
                            assertThat(acquisitions(meters, "outage:" + kind, "acquired")).isEqualTo(1);
                        });
                    });
        }
    }

    @Test
    void aCallWhoseWaitRedisOutlastsCountsOneFailedAcquisition() {
        try (RedisServer outage = RedisServer.start()) {
            runner.withConfiguration(AutoConfigurations.of(RelockMetricsAutoConfiguration.class))
                    .withPropertyValues("spring.data.redis.port=" + outage.port(), "relock.command-timeout=500ms")
                    .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                    .withBean(RelockClientBuilderCustomizer.class, () -> builder -> builder.metricsGroup(name -> name))
                    .withBean(ShortWait.class)
                    .run(context -> {
                        MeterRegistry meters = context.getBean(MeterRegistry.class);
                        ShortWait bean = context.getBean(ShortWait.class);
                        outage.stop();
                        // relock-core's wait tries again within itself until the wait ends: one call, one failure
                        assertThat(millisToFailureOfEach(bean))
                                .allSatisfy(failed -> assertThat(failed).succeedsWithin(HANG));
                        assertThat(List.of("plain", "stage", "mono", "flux")).allSatisfy(kind -> assertThat(
                                acquisitions(meters, "outage:" + kind, "failed")).as(kind).isEqualTo(1));
                    });
        }
    }

    @Test
    void anApplicationStartedWhileRedisWasDownRunsAWaitingMethodOnceRedisAnswers() {
        try (RedisServer late = RedisServer.start()) {
            late.stop();
            runner.withPropertyValues("spring.data.redis.port=" + late.port(), "relock.command-timeout=500ms")
                    .withBean(LongWait.class)
                    .run(context -> {
                        LongWait bean = context.getBean(LongWait.class);
                        CompletableFuture<String> plain = new CompletableFuture<>();
                        Thread caller = new Thread(() -> {
                            try {
                                plain.complete(bean.plain("plain"));
                            } catch (RuntimeException e) {
                                plain.completeExceptionally(e);
                            }
                        }, "plain-caller");
                        caller.setDaemon(true);
                        caller.start();
                        // the client never connected, so it has no meters yet: the pause after a failed try, slept
                        // in the caller's thread, is the sign that the plain call tried while Redis was down
                        await("the plain call paused after a failed try").atMost(HANG)
                                .until(() -> isPausingAfterAFailedTry(caller));
                        CompletableFuture<String> mono = bean.mono("mono").toFuture();
                        late.restart();
                        assertThat(plain).succeedsWithin(HANG).isEqualTo("ran plain");
                        assertThat(mono).succeedsWithin(HANG).isEqualTo("ran mono");
                    });
        }
    }

    /** Whether {@code caller} sleeps in the interceptor's pause between tries, the only sleep on its way. */
    private static boolean isPausingAfterAFailedTry(Thread caller) {
        return caller.getState() == Thread.State.TIMED_WAITING && Arrays.stream(caller.getStackTrace())
                .anyMatch(frame -> frame.getClassName().equals(Thread.class.getName())
                        && frame.getMethodName().equals("sleep"));
    }

    @Test
    void aWaitThatRedisOutlastsFailsWhenItEndsNotAtOnce() {
        try (RedisServer late = RedisServer.start()) {
            late.stop();
            runner.withPropertyValues("spring.data.redis.port=" + late.port(), "relock.command-timeout=500ms")
                    .withBean(ShortWait.class)
                    .run(context -> {
                        ShortWait bean = context.getBean(ShortWait.class);
                        assertThat(millisToFailureOfEach(bean)).allSatisfy(failed -> assertThat(failed).succeedsWithin(HANG)
                                .satisfies(millis -> assertThat(millis)
                                        .isGreaterThanOrEqualTo(ShortWait.WAIT.toMillis())));
                    });
        }
    }

    /** The four calls of {@code bean}, started now, each as {@link #millisToFailure}. */
    private static List<CompletableFuture<Long>> millisToFailureOfEach(ShortWait bean) {
        long start = System.nanoTime();
        return List.of(
                millisToFailure(start, CompletableFuture.supplyAsync(() -> bean.plain("plain"))),
                millisToFailure(start, bean.stage("stage")),
                millisToFailure(start, bean.mono("mono").toFuture()),
                millisToFailure(start, bean.flux("flux").single().toFuture()));
    }

    /**
     * How long after {@code start} the {@code call} failed with the lock's {@link RedisUnavailableForLockException},
     * naming the lock and the address of the Redis; a future that fails if it did anything else.
     */
    private static CompletableFuture<Long> millisToFailure(long start, CompletableFuture<String> call) {
        return call.handle((value, failure) -> {
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            Throwable error = failure instanceof CompletionException && failure.getCause() != null
                    ? failure.getCause() : failure;
            assertThat(error).isInstanceOf(RedisUnavailableForLockException.class)
                    .isInstanceOf(RedisUnavailableException.class)
                    .hasMessageStartingWith("lock 'outage:")
                    .hasMessageContaining("within the wait of 1000 ms")
                    .hasMessageContaining(RedisServer.HOST + ":");
            return millis;
        });
    }

    private static double waitingAcquisitions(MeterRegistry meters, String group) {
        Gauge waiting = meters.find("relock.waiting").tags("group", group).gauge();
        return waiting == null ? 0 : waiting.value();
    }

    private static long acquisitions(MeterRegistry meters, String group, String outcome) {
        Timer timer = meters.find("relock.acquire").tags("group", group, "outcome", outcome).timer();
        return timer == null ? 0 : timer.count();
    }
}
