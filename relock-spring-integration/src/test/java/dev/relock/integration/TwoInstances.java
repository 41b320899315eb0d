package dev.relock.integration;

import static org.assertj.core.api.Assertions.assertThat;

import dev.relock.RelockClient;
import dev.relock.RelockClientBuilder;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * Two registries with the same registry key on two relock clients: two application instances
 * sharing one Redis (the fixture's redis-server on a free port). Each test gets fresh ones, and
 * threads of its own for what another thread of an instance does; afterwards the threads have
 * ended, the clients are closed and Redis is empty.
 */
abstract class TwoInstances extends OneRedisPerClass {

    private final List<RelockClient> clients = new CopyOnWriteArrayList<>();
    ExecutorService threads;
    RelockClient clientA;
    RelockLockRegistry instanceA;
    RelockLockRegistry instanceB;

    @BeforeEach
    void twoInstances() {
        threads = Executors.newCachedThreadPool();
        clientA = newClient(UnaryOperator.identity());
        instanceA = new RelockLockRegistry(clientA, "app");
        instanceB = new RelockLockRegistry(newClient(UnaryOperator.identity()), "app");
    }

    @AfterEach
    void closeEverything() throws InterruptedException {
        threads.shutdownNow();
        boolean ended = threads.awaitTermination(HANG.toMillis(), TimeUnit.MILLISECONDS);
        clients.forEach(RelockClient::close);
        clients.clear();
        redis.flushAll();
        assertThat(ended).as("test threads ended").isTrue();
    }

    /** A client of the fixture's Redis, closed after the test. */
    RelockClient newClient(UnaryOperator<RelockClientBuilder> settings) {
        RelockClient client = settings.apply(RelockClient.builder().redisUri(redis.uri())).build();
        clients.add(client);
        return client;
    }

    <T> T inOtherThread(Callable<T> work) throws Exception {
        return threads.submit(work).get(HANG.toMillis(), TimeUnit.MILLISECONDS);
    }

    static Throwable catchThrowable(Runnable action) {
        CompletableFuture<Throwable> thrown = new CompletableFuture<>();
        try {
            action.run();
            thrown.complete(null);
        } catch (RuntimeException e) {
            thrown.complete(e);
        }
        return thrown.join();
    }
}
