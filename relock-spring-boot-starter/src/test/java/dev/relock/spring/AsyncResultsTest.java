package dev.relock.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.relock.LeaseLostException;
import dev.relock.LockHandle;
import dev.relock.LockInfo;
import dev.relock.RelockClient;
import dev.relock.spring.DistributedLock.WhenNotAcquired;
import dev.relock.spring.boot.RelockContextTestBase;
import io.lettuce.core.RedisClient;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.netty.util.internal.ThreadExecutorMap;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.core.ConditionFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * {@code @DistributedLock} on methods returning a Mono, a Flux or a CompletionStage: the lock is held until the
 * returned work ends, not until the method returns. Another application is a second client, {@code other}, that
 * holds, inspects and forces locks open.
 */
@Tag("redis")
class AsyncResultsTest extends RelockContextTestBase {

    /** A bound that only a hang exceeds. */
    private static final Duration HANG = Duration.ofSeconds(10);

    /** Locked methods that return the work they are given, counting the calls that ran. */
    public static class Shipping {

        private final AtomicInteger bodiesRun = new AtomicInteger();
        // the Netty threads (I/O threads, Lettuce event executors) that slow bodies ran on, and how many returned
        private final List<String> slowBodiesOnNetty = new CopyOnWriteArrayList<>();
        private final AtomicInteger slowBodiesReturned = new AtomicInteger();

        /** How many calls ran a method body (not a fallback, not a skip); a method, as the bean is a proxy. */
        public int bodiesRun() {
            return bodiesRun.get();
        }

        /** The names of the Netty threads that bodies of {@link #packSlowly} and {@link #labelSlowly} ran on. */
        public List<String> slowBodiesOnNetty() {
            return slowBodiesOnNetty;
        }

        /** How many bodies of {@link #packSlowly} and {@link #labelSlowly} returned (were not interrupted). */
        public int slowBodiesReturned() {
            return slowBodiesReturned.get();
        }

        /** Blocks before it returns its Mono, as a body that reads a file or calls JDBC first. */
        @DistributedLock(name = "'order:' + #id")
        public Mono<String> packSlowly(String id, CountDownLatch entered, CountDownLatch mayReturn)
                throws InterruptedException {
            slowBody(entered, mayReturn);
            return Mono.just("packed " + id);
        }

        /** As {@link #packSlowly}, for a Flux. */
        @DistributedLock(name = "'order:' + #id")
        public Flux<String> labelSlowly(String id, CountDownLatch entered, CountDownLatch mayReturn)
                throws InterruptedException {
            slowBody(entered, mayReturn);
            return Flux.just("label of " + id);
        }

        private void slowBody(CountDownLatch entered, CountDownLatch mayReturn) throws InterruptedException {
            bodiesRun.incrementAndGet();
            if (ThreadExecutorMap.currentExecutor() != null) {
                slowBodiesOnNetty.add(Thread.currentThread().getName());
            }
            entered.countDown();
            if (!mayReturn.await(3 * HANG.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException("never allowed to return");
            }
            slowBodiesReturned.incrementAndGet();
        }

        @DistributedLock(name = "'order:' + #id")
        public <T> Mono<T> ship(String id, Mono<T> work) {
            bodiesRun.incrementAndGet();
            return work;
        }

        @DistributedLock(name = "'order:' + #id", waitFor = "10s")
        public <T> Mono<T> shipWaiting(String id, Mono<T> work) {
            bodiesRun.incrementAndGet();
            return work;
        }

        @DistributedLock(name = "'order:' + #id")
        public <T> Flux<T> lines(String id, Flux<T> work) {
            bodiesRun.incrementAndGet();
            return work;
        }

        @DistributedLock(name = "'order:' + #id", whenNotAcquired = WhenNotAcquired.SKIP)
        public Mono<String> status(String id) {
            bodiesRun.incrementAndGet();
            return Mono.just("open");
        }

        @DistributedLock(name = "'order:' + #id", whenNotAcquired = WhenNotAcquired.SKIP)
        public Flux<String> events(String id) {
            bodiesRun.incrementAndGet();
            return Flux.just("created", "paid");
        }

        @DistributedLock(name = "'order:' + #id", whenNotAcquired = WhenNotAcquired.FALLBACK, fallback = "cancelLater")
        public Mono<String> cancel(String id) {
            bodiesRun.incrementAndGet();
            return Mono.just("cancelled " + id);
        }

        public Mono<String> cancelLater(String id) {
            return Mono.just("queued cancellation of " + id);
        }

        @DistributedLock(name = "'order:' + #id")
        public CompletableFuture<String> invoice(String id, CompletableFuture<String> work) {
            bodiesRun.incrementAndGet();
            return work;
        }

        @DistributedLock(name = "'order:' + #id", waitFor = "10s")
        public CompletionStage<String> invoiceWaiting(String id, CompletionStage<String> work) {
            bodiesRun.incrementAndGet();
            return work;
        }

        @DistributedLock(name = "'order:' + #id", whenNotAcquired = WhenNotAcquired.SKIP)
        public CompletionStage<String> label(String id) {
            bodiesRun.incrementAndGet();
            return CompletableFuture.completedFuture("label of " + id);
        }

        @DistributedLock(name = "'order:' + #id", whenNotAcquired = WhenNotAcquired.FALLBACK, fallback = "refundLater")
        public CompletableFuture<String> refund(String id) {
            bodiesRun.incrementAndGet();
            return CompletableFuture.completedFuture("refunded " + id);
        }

        public CompletableFuture<String> refundLater(String id) {
            return CompletableFuture.completedFuture("queued refund of " + id);
        }
    }

    private RelockClient other;

    @BeforeAll
    void startOther() {
        other = RelockClient.create(redis.uri());
    }

    @AfterEach
    void nothingIsLeftHeld() {
        soon("every hold released").until(() -> other.list("*").stream().noneMatch(LockInfo::isHeld));
    }

    @AfterAll
    void closeOther() {
        other.close();
    }

    @Test
    void aMonoTakesTheLockWhenSubscribedAndHoldsItUntilItEnds() {
        runner.withBean(Shipping.class).run(context -> {
            Shipping shipping = context.getBean(Shipping.class);
            Mono<Boolean> heldInside = shipping.ship("1", heldNow("order:1"));
            assertThat(shipping.bodiesRun()).as("calls before anybody subscribed").isZero();
            assertThat(isHeld("order:1")).isFalse();

            assertThat(heldInside.block(HANG)).as("held inside").isTrue();
            assertThat(isHeld("order:1")).as("held once the Mono ended").isFalse();
            assertThat(heldInside.block(HANG)).as("a second subscription, under the lock again").isTrue();
            assertThat(shipping.bodiesRun()).isEqualTo(2);

            assertThatThrownBy(() -> shipping.ship("1", Mono.error(new IllegalStateException("carrier refused")))
                    .block(HANG)).isInstanceOf(IllegalStateException.class).hasMessage("carrier refused");
            assertThat(isHeld("order:1")).as("held after the Mono failed").isFalse();

            Disposable never = shipping.ship("1", Mono.never()).subscribe();
            soon("held").until(() -> isHeld("order:1"));
            never.dispose();
            soon("released after the cancel").until(() -> !isHeld("order:1"));
        });
    }

    @Test
    void aFluxHoldsTheLockUntilItCompletes() {
        runner.withBean(Shipping.class).run(context -> {
            Shipping shipping = context.getBean(Shipping.class);
            assertThat(shipping.lines("5", Flux.concat(heldNow("order:5"), heldNow("order:5"))).collectList().block(HANG))
                    .containsExactly(true, true);
            assertThat(isHeld("order:5")).isFalse();

            assertThatThrownBy(() -> shipping.lines("5", Flux.error(new IllegalStateException("no lines"))).blockLast(HANG))
                    .hasMessage("no lines");
            assertThat(isHeld("order:5")).isFalse();
        });
    }

    @Test
    void whenNotAcquiredWorksForMonoAndFlux() {
        runner.withBean(Shipping.class).run(context -> {
            Shipping shipping = context.getBean(Shipping.class);
            try (LockHandle held = other.lock("order:2").acquire()) {
                assertThatThrownBy(() -> shipping.ship("2", Mono.just("shipped")).block(HANG))
                        .isInstanceOf(LockNotAcquiredException.class)
                        .hasMessageContaining("lock 'order:2' was not acquired within 0 ms")
                        .hasMessageContaining(Shipping.class.getName() + ".ship did not run");
                assertThatThrownBy(() -> shipping.lines("2", Flux.just("line")).blockLast(HANG))
                        .isInstanceOf(LockNotAcquiredException.class);
                assertThat(shipping.status("2").block(HANG)).as("SKIP: an empty Mono").isNull();
                assertThat(shipping.events("2").collectList().block(HANG)).as("SKIP: an empty Flux").isEmpty();
                assertThat(shipping.cancel("2").block(HANG)).isEqualTo("queued cancellation of 2");
                assertThat(shipping.bodiesRun()).as("bodies run while the lock was taken").isZero();
                assertThat(held.isValid()).isTrue();
            }
            assertThat(shipping.status("2").block(HANG)).isEqualTo("open");
            assertThat(shipping.events("2").collectList().block(HANG)).containsExactly("created", "paid");
            assertThat(shipping.cancel("2").block(HANG)).isEqualTo("cancelled 2");
        });
    }

    @Test
    void aMonoWaitsForTheLockWhenSubscribedAndRunsOnceItIsFree() {
        runner.withBean(Shipping.class).run(context -> {
            Shipping shipping = context.getBean(Shipping.class);
            CompletableFuture<String> waiting;
            try (LockHandle held = other.lock("order:3").acquire()) {
                waiting = shipping.shipWaiting("3", Mono.just("shipped")).toFuture();
                soon("queued").until(() -> other.inspect("order:3").waiters() == 1);
                assertThat(shipping.bodiesRun()).isZero();
                assertThat(held.isValid()).isTrue();
            }
            assertThat(waiting.get(HANG.toSeconds(), TimeUnit.SECONDS)).isEqualTo("shipped");

            Disposable cancelled;
            try (LockHandle held = other.lock("order:3").acquire()) {
                cancelled = shipping.shipWaiting("3", Mono.just("shipped")).subscribe();
                soon("queued").until(() -> other.inspect("order:3").waiters() == 1);
                cancelled.dispose();
                soon("withdrawn").until(() -> other.inspect("order:3").waiters() == 0);
                assertThat(held.isValid()).isTrue();
            }
            assertThat(isHeld("order:3")).as("held after the holder released").isFalse();
            assertThat(shipping.bodiesRun()).isEqualTo(1);
        });
    }

    @Test
    void aLeaseLostWhileAMonoRunsFailsIt() {
        runner.withBean(Shipping.class).withPropertyValues("relock.default-lease=1s").run(context -> {
            Shipping shipping = context.getBean(Shipping.class);
            CompletableFuture<Object> running = shipping.ship("8", Mono.never()).toFuture();
            soon("held").until(() -> isHeld("order:8"));
            assertThat(other.lock("order:8").forceUnlock()).isTrue();
            assertThatThrownBy(() -> running.get(HANG.toSeconds(), TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class)
                    .hasCauseInstanceOf(LeaseLostException.class);
        });
    }

    @Test
    void aCompletableFutureHoldsTheLockUntilItCompletes() {
        runner.withBean(Shipping.class).run(context -> {
            Shipping shipping = context.getBean(Shipping.class);
            CompletableFuture<String> work = new CompletableFuture<>();
            CompletableFuture<String> invoiced = shipping.invoice("4", work);
            soon("the method called once the lock was held").until(() -> shipping.bodiesRun() == 1);
            assertThat(isHeld("order:4")).isTrue();
            assertThat(invoiced).isNotDone();

            work.complete("paid");
            assertThat(invoiced.get(HANG.toSeconds(), TimeUnit.SECONDS)).isEqualTo("paid");
            assertThat(isHeld("order:4")).as("held once the result completed").isFalse();

            CompletableFuture<String> failing = new CompletableFuture<>();
            CompletableFuture<String> declined = shipping.invoice("4", failing);
            soon("held").until(() -> isHeld("order:4"));
            failing.completeExceptionally(new IllegalStateException("card declined"));
            assertThatThrownBy(() -> declined.get(HANG.toSeconds(), TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class)
                    .cause().isInstanceOf(IllegalStateException.class).hasMessage("card declined");
            assertThat(isHeld("order:4")).as("held once the result failed").isFalse();
        });
    }

    @Test
    void whenNotAcquiredWorksForCompletionStages() {
        runner.withBean(Shipping.class).run(context -> {
            Shipping shipping = context.getBean(Shipping.class);
            try (LockHandle held = other.lock("order:6").acquire()) {
                CompletableFuture<String> refused = shipping.invoice("6", CompletableFuture.completedFuture("paid"));
                assertThatThrownBy(() -> refused.get(HANG.toSeconds(), TimeUnit.SECONDS))
                        .isInstanceOf(ExecutionException.class)
                        .cause().isInstanceOf(LockNotAcquiredException.class)
                        .hasMessageContaining("lock 'order:6' was not acquired within 0 ms");
                assertThat(shipping.label("6").toCompletableFuture().get(HANG.toSeconds(), TimeUnit.SECONDS))
                        .as("SKIP: completed with null").isNull();
                assertThat(shipping.refund("6").get(HANG.toSeconds(), TimeUnit.SECONDS)).isEqualTo("queued refund of 6");
                assertThat(shipping.bodiesRun()).isZero();
                assertThat(held.isValid()).isTrue();
            }
            assertThat(shipping.label("6").toCompletableFuture().get(HANG.toSeconds(), TimeUnit.SECONDS))
                    .isEqualTo("label of 6");
            assertThat(shipping.refund("6").get(HANG.toSeconds(), TimeUnit.SECONDS)).isEqualTo("refunded 6");
        });
    }

    @Test
    void cancellingAStageThatWaitsForTheLockWithdrawsIt() {
        runner.withBean(Shipping.class).run(context -> {
            Shipping shipping = context.getBean(Shipping.class);
            try (LockHandle held = other.lock("order:7").acquire()) {
                CompletableFuture<String> waiting = shipping
                        .invoiceWaiting("7", CompletableFuture.completedFuture("paid")).toCompletableFuture();
                soon("queued").until(() -> other.inspect("order:7").waiters() == 1);
                assertThat(waiting.cancel(false)).isTrue();
                soon("withdrawn").until(() -> other.inspect("order:7").waiters() == 0);
                assertThat(held.isValid()).isTrue();
            }
            assertThat(isHeld("order:7")).as("held after the holder released").isFalse();
            assertThat(shipping.bodiesRun()).isZero();
        });
    }

    /**
     * The bodies of Mono and Flux methods run off the client's Netty threads: ones that block before they return
     * their publishers hold up no reply, timer or hand-over of the client. Its two event executors here (a Lettuce
     * RedisClient bean with two, the fewest Lettuce allows) are where an asynchronous acquisition completes, and
     * where the bodies used to run.
     */
    @Test
    void bodiesThatBlockBeforeReturningTheirPublishersDelayNoOtherLockOfTheClient() {
        ClientResources twoEventExecutors = DefaultClientResources.builder().computationThreadPoolSize(2).build();
        RedisClient lettuce = RedisClient.create(twoEventExecutors, redis.uri());
        try {
            runner.withBean(Shipping.class)
                    .withBean(RedisClient.class, () -> lettuce, definition -> definition.setDestroyMethodName(""))
                    .run(context -> {
                        Shipping shipping = context.getBean(Shipping.class);
                        RelockClient client = context.getBean(RelockClient.class);
                        CountDownLatch entered = new CountDownLatch(2);
                        CountDownLatch mayReturn = new CountDownLatch(1);
                        CompletableFuture<String> packed = shipping.packSlowly("10", entered, mayReturn).toFuture();
                        CompletableFuture<List<String>> labelled =
                                shipping.labelSlowly("11", entered, mayReturn).collectList().toFuture();
                        try {
                            assertThat(entered.await(HANG.toMillis(), TimeUnit.MILLISECONDS))
                                    .as("both bodies running at once").isTrue();
                            assertThat(shipping.slowBodiesOnNetty()).as("the Netty threads the bodies ran on")
                                    .isEmpty();
                            // completes on an event executor (no caller waits in it to handle its reply); started
                            // on a thread of its own, as it may need one before it returns its future
                            CompletableFuture.supplyAsync(() -> client.lock("unrelated")
                                            .tryAcquireAsync(Duration.ZERO).toCompletableFuture().join())
                                    .get(HANG.toMillis(), TimeUnit.MILLISECONDS).orElseThrow().close();
                        } finally {
                            mayReturn.countDown();
                        }
                        assertThat(packed.get(HANG.toMillis(), TimeUnit.MILLISECONDS)).isEqualTo("packed 10");
                        assertThat(labelled.get(HANG.toMillis(), TimeUnit.MILLISECONDS)).containsExactly("label of 11");
                    });
        } finally {
            lettuce.shutdown();
            twoEventExecutors.shutdown();
        }
    }

    /**
     * Off the client's threads, the lock is still held exactly while the body runs: a cancel that comes while the
     * method has not returned its publisher releases the lock once it has, and does not interrupt it.
     */
    @Test
    void aCancelWhileTheBodyRunsReleasesTheLockOnceTheBodyReturned() {
        runner.withBean(Shipping.class).run(context -> {
            Shipping shipping = context.getBean(Shipping.class);
            CountDownLatch entered = new CountDownLatch(1);
            CountDownLatch mayReturn = new CountDownLatch(1);
            Disposable packing = shipping.packSlowly("12", entered, mayReturn).subscribe();
            try {
                assertThat(entered.await(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
                packing.dispose();
                await("held while the body runs").during(Duration.ofMillis(300)).atMost(HANG)
                        .until(() -> isHeld("order:12"));
            } finally {
                mayReturn.countDown();
            }
            soon("released once the body returned").until(() -> !isHeld("order:12"));
            assertThat(shipping.slowBodiesReturned()).as("bodies that returned, not interrupted").isEqualTo(1);
        });
    }

    private boolean isHeld(String name) {
        return other.inspect(name).isHeld();
    }

    /** Whether {@code name} is held when subscribed, asked off the thread that subscribes it. */
    private Mono<Boolean> heldNow(String name) {
        return Mono.fromCallable(() -> isHeld(name)).subscribeOn(Schedulers.boundedElastic());
    }

    /** Checks at once, then every 10 ms, up to {@link #HANG}. */
    private static ConditionFactory soon(String what) {
        return await(what).atMost(HANG).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(10));
    }
}
