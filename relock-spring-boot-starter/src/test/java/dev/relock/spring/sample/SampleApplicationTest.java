package dev.relock.spring.sample;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.relock.RelockClient;
import dev.relock.spring.LockNotAcquiredException;
import dev.relock.testredis.RedisServer;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The sample application against a fixture Redis: {@code @DistributedLock} as its users see it.
 * Another holder of a lock is a thread of this JVM that stays inside a locked method until the
 * test lets it go (each thread is its own lock owner), or a second application context.
 */
@Tag("redis")
@SpringBootTest(properties = "relock.key-prefix=sample")
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
class SampleApplicationTest {

    /** A bound that only a hang exceeds. */
    private static final long HANG_SECONDS = 10;

    /**
     * Outlives the application context, which closes after the class ({@code @DirtiesContext}) so
     * that its client releases and disconnects while Redis still runs; the fixture's shutdown hook
     * stops it when the JVM exits.
     */
    private static final RedisServer REDIS = RedisServer.start();

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) {
        registry.add("spring.data.redis.host", REDIS::host);
        registry.add("spring.data.redis.port", REDIS::port);
    }

    @Autowired
    Orders orders;

    @Autowired
    Invoices invoices;

    @Autowired
    RelockClient relock;

    private final ExecutorService threads = Executors.newCachedThreadPool();
    private final CountDownLatch letGo = new CountDownLatch(1);

    @AfterEach
    void stopThreads() throws InterruptedException {
        letGo.countDown();
        threads.shutdown();
        assertThat(threads.awaitTermination(HANG_SECONDS, TimeUnit.SECONDS)).isTrue();
        assertThat(relock.list("*")).as("locks left held").isEmpty();
    }

    @Test
    void anotherCallerOfTheSameNameIsRefusedWhileTheLockIsHeldAndServedAfterwards() throws Exception {
        Future<String> holder = holdInAnotherThread(held -> orders.ship(new Order("42"), held));

        assertThatThrownBy(() -> orders.ship(new Order("42"), () -> {}))
                .isInstanceOf(LockNotAcquiredException.class)
                .hasMessageContaining("lock 'order:42'")
                // who holds it: this process (its identity record), the thread named once a keeper pass wrote it
                .hasMessageContaining("(held by " + (relock.identity().application().isEmpty() ? "an application"
                        : relock.identity().application()) + " on " + relock.identity().host() + " (pid "
                        + ProcessHandle.current().pid() + ")")
                .hasMessageContaining(Orders.class.getName() + ".ship did not run")
                .satisfies(e -> assertThat(((LockNotAcquiredException) e).lockName()).isEqualTo("order:42"));
        assertThat(orders.ship(new Order("43"), () -> {})).as("another order's lock").isEqualTo("shipped 43");

        letGo.countDown();
        assertThat(holder.get(HANG_SECONDS, TimeUnit.SECONDS)).isEqualTo("shipped 42");
        assertThat(orders.ship(new Order("42"), () -> {})).isEqualTo("shipped 42");
    }

    @Test
    void aWaitingCallerRunsOnceTheHolderReturns() throws Exception {
        AtomicBoolean holderBodyEnded = new AtomicBoolean();
        Future<String> holder = holdInAnotherThread(held -> orders.ship(new Order("7"), () -> {
            held.run();
            holderBodyEnded.set(true);
        }));
        AtomicBoolean waiterSawHolderEnded = new AtomicBoolean();
        Future<String> waiter = threads.submit(() -> orders.shipWaiting(new Order("7"),
                () -> waiterSawHolderEnded.set(holderBodyEnded.get())));

        letGo.countDown();
        assertThat(waiter.get(HANG_SECONDS, TimeUnit.SECONDS)).isEqualTo("shipped 7");
        assertThat(holder.get(HANG_SECONDS, TimeUnit.SECONDS)).isEqualTo("shipped 7");
        assertThat(waiterSawHolderEnded).as("the waiter's body ran after the holder's had ended").isTrue();
    }

    @Test
    void anInterruptedWaiterGivesUpWithLockNotAcquiredAndKeepsItsInterruptStatus() throws Exception {
        holdInAnotherThread(held -> orders.ship(new Order("16"), held));
        CompletableFuture<LockNotAcquiredException> refused = new CompletableFuture<>();
        AtomicBoolean stillInterrupted = new AtomicBoolean();
        Thread waiter = new Thread(() -> {
            try {
                orders.shipWaiting(new Order("16"), () -> {});
                refused.completeExceptionally(new AssertionError("ran while the lock was held"));
            } catch (LockNotAcquiredException e) {
                stillInterrupted.set(Thread.currentThread().isInterrupted());
                refused.complete(e);
            } catch (Throwable t) {
                refused.completeExceptionally(t);
            }
        });
        waiter.start();
        waiter.interrupt();

        assertThat(refused.get(HANG_SECONDS, TimeUnit.SECONDS))
                .hasMessageContaining("lock 'order:16' was not acquired: interrupted while waiting")
                .hasCauseInstanceOf(InterruptedException.class);
        assertThat(stillInterrupted).isTrue();
        waiter.join(TimeUnit.SECONDS.toMillis(HANG_SECONDS));
    }

    @Test
    void theLockIsHeldForTheWholeMethodAndReleasedWhenItReturnsOrThrows() {
        AtomicBoolean heldInside = new AtomicBoolean();
        orders.ship(new Order("8"), () -> heldInside.set(relock.lock("order:8").isHeldByCurrentThread()));
        assertThat(heldInside).isTrue();
        assertThat(relock.lock("order:8").isLocked()).isFalse();

        assertThatThrownBy(() -> orders.shipFailing(new Order("8"), () -> {}))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("carrier refused order 8");
        assertThat(relock.lock("order:8").isLocked()).isFalse();
    }

    @Test
    void skipReturnsTheEmptyValueOfTheReturnTypeWithoutRunningTheMethod() throws Exception {
        holdInAnotherThread(held -> orders.ship(new Order("9"), held));
        int bodiesBefore = orders.bodiesRun();

        assertThat(orders.trackingNumber(new Order("9"), () -> {})).isEqualTo(Optional.empty());
        assertThat(orders.lines(new Order("9"), () -> {})).isEmpty();
        assertThat(orders.stock(new Order("9"), () -> {})).isEmpty();
        assertThat(orders.status(new Order("9"), () -> {})).isNull();
        orders.touch(new Order("9"), () -> {});
        assertThat(orders.bodiesRun()).isEqualTo(bodiesBefore);

        assertThat(orders.trackingNumber(new Order("10"), () -> {})).contains("T-10");
        assertThat(orders.lines(new Order("10"), () -> {})).containsExactly("line of 10");
    }

    @Test
    void fallbackIsCalledWithTheSameArgumentsWhenTheLockIsTaken() throws Exception {
        holdInAnotherThread(held -> orders.ship(new Order("11"), held));

        assertThat(orders.cancel(new Order("11"), () -> {})).isEqualTo("queued cancellation of 11");
        assertThat(orders.cancel(new Order("12"), () -> {})).isEqualTo("cancelled 12");
    }

    @Test
    void namesAreSpelOverParameterNamesIndexesAndBeans() {
        AtomicBoolean named = new AtomicBoolean();
        orders.count("north", 3, () -> named.set(relock.lock("eu:north:3").isHeldByCurrentThread()));
        assertThat(named).isTrue();

        AtomicBoolean byIndex = new AtomicBoolean();
        orders.trackingNumber(new Order("13"), () -> byIndex.set(relock.lock("order:13").isHeldByCurrentThread()));
        assertThat(byIndex).as("#p0").isTrue();
    }

    @Test
    void sharedHoldersRunTogetherAndExcludeTheExclusiveOne() throws Exception {
        Future<String> reader = holdInAnotherThread(held -> orders.readCatalog("spring", held));

        assertThat(orders.readCatalog("spring", () -> {})).as("a second reader").isEqualTo("read spring");
        assertThatThrownBy(() -> orders.writeCatalog("spring", () -> {}))
                .isInstanceOf(LockNotAcquiredException.class)
                .hasMessageContaining("'catalog:spring'");

        letGo.countDown();
        assertThat(reader.get(HANG_SECONDS, TimeUnit.SECONDS)).isEqualTo("read spring");
        assertThat(orders.writeCatalog("spring", () -> {})).isEqualTo("wrote spring");
    }

    @Test
    void aLockedMethodCallingAnotherOfTheSameLockEntersItAgain() {
        AtomicInteger holdCount = new AtomicInteger();
        assertThat(invoices.invoiceAndShip(new Order("14"),
                () -> holdCount.set(relock.lock("order:14").getHoldCount()))).isEqualTo("shipped 14");
        assertThat(holdCount).hasValue(2);
        assertThat(relock.lock("order:14").isLocked()).isFalse();
    }

    @Test
    void twoApplicationsExcludeEachOther() throws Exception {
        try (ConfigurableApplicationContext other = new SpringApplicationBuilder(SampleApplication.class)
                .web(WebApplicationType.NONE)
                .properties("relock.key-prefix=sample",
                        "spring.data.redis.host=" + REDIS.host(), "spring.data.redis.port=" + REDIS.port())
                .run()) {
            Orders otherOrders = other.getBean(Orders.class);
            Future<String> holder = holdInAnotherThread(held -> otherOrders.ship(new Order("15"), held));

            assertThatThrownBy(() -> orders.ship(new Order("15"), () -> {}))
                    .isInstanceOf(LockNotAcquiredException.class);
            assertThat(orders.cancel(new Order("15"), () -> {})).isEqualTo("queued cancellation of 15");

            letGo.countDown();
            holder.get(HANG_SECONDS, TimeUnit.SECONDS);
            assertThat(orders.ship(new Order("15"), () -> {})).isEqualTo("shipped 15");
        }
    }

    /**
     * Calls {@code call} in another thread with a {@code whileHeld} that blocks until the test's
     * {@link #letGo}, and returns once that thread is inside the locked method.
     */
    private <T> Future<T> holdInAnotherThread(Function<Runnable, T> call) throws Exception {
        CountDownLatch inside = new CountDownLatch(1);
        CompletableFuture<T> result = new CompletableFuture<>();
        threads.execute(() -> {
            try {
                result.complete(call.apply(() -> {
                    inside.countDown();
                    awaitUninterruptibly(letGo);
                }));
            } catch (Throwable t) {
                result.completeExceptionally(t);
            }
        });
        if (!inside.await(HANG_SECONDS, TimeUnit.SECONDS)) {
            throw new AssertionError("the holder never got inside: " + result);
        }
        return result;
    }

    private static void awaitUninterruptibly(CountDownLatch latch) {
        try {
            if (!latch.await(HANG_SECONDS, TimeUnit.SECONDS)) {
                throw new AssertionError("not let go within " + Duration.ofSeconds(HANG_SECONDS));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }
}
