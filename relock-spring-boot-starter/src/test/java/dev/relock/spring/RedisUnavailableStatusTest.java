package dev.relock.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.asyncDispatch;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.request;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

import dev.relock.RedisUnavailableException;
import dev.relock.RelockClient;
import dev.relock.spring.boot.RelockContextTestBase;
import dev.relock.testredis.RedisServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.MvcResult;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import reactor.core.publisher.Mono;

/**
 * Issue 39: a web request whose {@code @DistributedLock} method could not take its lock because Redis could not be
 * reached answered 500. It answers 503 Service Unavailable in Spring MVC and WebFlux, for plain, CompletableFuture
 * and Mono results; an application's own exception handler still decides; and a {@link RedisUnavailableException}
 * that the method body throws itself, or the release after it, is left alone. The controllers call the locked bean
 * of a real application context whose Redis is stopped ({@link #down}) or running.
 */
@Tag("redis")
class RedisUnavailableStatusTest extends RelockContextTestBase {

    /** A Redis that ran once, so its port is known, and is stopped for the class. */
    private RedisServer down;

    /** Locked methods the controllers call. */
    public static class Shipping {

        @DistributedLock(name = "'order:' + #id")
        public String ship(String id) {
            return "shipped " + id;
        }

        @DistributedLock(name = "'order:' + #id")
        public CompletableFuture<String> invoice(String id) {
            return CompletableFuture.completedFuture("invoiced " + id);
        }

        @DistributedLock(name = "'order:' + #id")
        public Mono<String> pack(String id) {
            return Mono.just("packed " + id);
        }

        /** Holds its lock, then fails as a body that uses Redis on its own may. */
        @DistributedLock(name = "'order:' + #id")
        public String report(String id) {
            throw new RedisUnavailableException("the report's own Redis did not answer", null);
        }

        /** Skips when another holder has the lock; Redis being down is not that. */
        @DistributedLock(name = "'order:' + #id", whenNotAcquired = DistributedLock.WhenNotAcquired.SKIP)
        public Optional<String> track(String id) {
            return Optional.of("tracked " + id);
        }

        /** Runs {@code meanwhile} while it holds its lock. */
        @DistributedLock(name = "'order:' + #id")
        public String close(String id, Runnable meanwhile) {
            meanwhile.run();
            return "closed " + id;
        }
    }

    @RestController
    static class Orders {

        private final Shipping shipping;

        Orders(Shipping shipping) {
            this.shipping = shipping;
        }

        @GetMapping("/orders/{id}/ship")
        String ship(@PathVariable("id") String id) {
            return shipping.ship(id);
        }

        @GetMapping("/orders/{id}/invoice")
        CompletableFuture<String> invoice(@PathVariable("id") String id) {
            return shipping.invoice(id);
        }

        @GetMapping("/orders/{id}/pack")
        Mono<String> pack(@PathVariable("id") String id) {
            return shipping.pack(id);
        }

        @GetMapping("/orders/{id}/report")
        String report(@PathVariable("id") String id) {
            return shipping.report(id);
        }
    }

    @RestControllerAdvice
    static class AnswersLater {
        @ExceptionHandler(RedisUnavailableException.class)
        ResponseEntity<String> unavailable(RedisUnavailableException e) {
            return ResponseEntity.status(HttpStatus.TOO_MANY_REQUESTS).header("Retry-After", "5").body(e.getMessage());
        }
    }

    @BeforeAll
    void stopARedis() {
        down = RedisServer.start();
        down.stop();
    }

    @AfterAll
    void closeIt() {
        down.close();
    }

    private ApplicationContextRunner whileRedisIsDown() {
        return runner.withBean(Shipping.class)
                .withPropertyValues("spring.data.redis.port=" + down.port(), "relock.command-timeout=500ms");
    }

    @Test
    void springMvcAnswersServiceUnavailableForPlainAndFutureResults() {
        whileRedisIsDown().run(context -> {
            MockMvc mvc = MockMvcBuilders.standaloneSetup(new Orders(context.getBean(Shipping.class))).build();
            mvc.perform(get("/orders/7/ship")).andExpect(status().isServiceUnavailable());
            MvcResult started = mvc.perform(get("/orders/7/invoice")).andExpect(request().asyncStarted()).andReturn();
            mvc.perform(asyncDispatch(started)).andExpect(status().isServiceUnavailable());
        });
    }

    @Test
    void webFluxAnswersServiceUnavailableForMonoAndFutureResults() {
        whileRedisIsDown().run(context -> {
            WebTestClient web = WebTestClient.bindToController(new Orders(context.getBean(Shipping.class))).build();
            web.get().uri("/orders/7/pack").exchange().expectStatus().isEqualTo(HttpStatus.SERVICE_UNAVAILABLE);
            web.get().uri("/orders/7/invoice").exchange().expectStatus().isEqualTo(HttpStatus.SERVICE_UNAVAILABLE);
        });
    }

    @Test
    void theApplicationsOwnHandlerOfRedisUnavailableExceptionDecides() {
        whileRedisIsDown().run(context -> {
            MockMvc mvc = MockMvcBuilders.standaloneSetup(new Orders(context.getBean(Shipping.class)))
                    .setControllerAdvice(new AnswersLater()).build();
            mvc.perform(get("/orders/7/ship")).andExpect(status().isTooManyRequests());
            WebTestClient web = WebTestClient.bindToController(new Orders(context.getBean(Shipping.class)))
                    .controllerAdvice(new AnswersLater()).build();
            web.get().uri("/orders/7/pack").exchange().expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
        });
    }

    @Test
    void monoAndStageCallsReturnAtOnceWhileTheClientConnectsAndFailLater() throws IOException {
        // takes connections into its backlog and never answers them: each connect lasts the command timeout
        try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            runner.withBean(Shipping.class)
                    .withPropertyValues("spring.data.redis.host=" + silent.getInetAddress().getHostAddress(),
                            "spring.data.redis.port=" + silent.getLocalPort(), "relock.command-timeout=2s")
                    .run(context -> {
                        Shipping shipping = context.getBean(Shipping.class);
                        CompletableFuture<String> packed = new CompletableFuture<>();
                        long start = System.nanoTime();
                        shipping.pack("7").subscribe(packed::complete, packed::completeExceptionally);
                        CompletableFuture<String> invoiced = shipping.invoice("7");
                        assertThat(Duration.ofNanos(System.nanoTime() - start))
                                .as("both calls returned before a connect could time out")
                                .isLessThan(Duration.ofSeconds(1));
                        assertThat(List.of(packed, invoiced)).allSatisfy(call -> assertThat(call)
                                .failsWithin(Duration.ofSeconds(20)).withThrowableOfType(ExecutionException.class)
                                .withCauseInstanceOf(RedisUnavailableForLockException.class));
                    });
        }
    }

    @Test
    void redisBeingDownIsNotALockHeldElsewhereSoSkipDoesNotApply() {
        whileRedisIsDown().run(context -> assertThatThrownBy(() -> context.getBean(Shipping.class).track("7"))
                .isInstanceOf(RedisUnavailableForLockException.class)
                .hasMessageStartingWith("lock 'order:7' could not be taken: Redis could not be reached (")
                .hasMessageEndingWith(Shipping.class.getName() + ".track did not run")
                .satisfies(e -> assertThat(((RedisUnavailableForLockException) e).lockName()).isEqualTo("order:7")));
    }

    @Test
    void aRedisUnavailableExceptionOfTheMethodBodyIsNotTheLocksAndStaysAServerError() {
        runner.withBean(Shipping.class).run(context -> {
            WebTestClient web = WebTestClient.bindToController(new Orders(context.getBean(Shipping.class))).build();
            web.get().uri("/orders/7/report").exchange().expectStatus().isEqualTo(HttpStatus.INTERNAL_SERVER_ERROR);
            assertThat(context.getBean(RelockClient.class).lock("order:7").isLocked())
                    .as("released after the body threw").isFalse();
        });
    }

    @Test
    void aReleaseThatCannotReachRedisAfterTheBodyRanIsNotTheLocksEither() {
        try (RedisServer doomed = RedisServer.start()) {
            runner.withBean(Shipping.class)
                    .withPropertyValues("spring.data.redis.port=" + doomed.port(), "relock.command-timeout=500ms")
                    .run(context -> assertThatThrownBy(() -> context.getBean(Shipping.class).close("7", doomed::kill))
                            .isInstanceOf(RedisUnavailableException.class)
                            .isNotInstanceOf(RedisUnavailableForLockException.class));
        }
    }
}
