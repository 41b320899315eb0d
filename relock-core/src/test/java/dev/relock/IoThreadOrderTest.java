package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lettuce.core.RedisClient;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.Transports;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.internal.ThreadExecutorMap;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The order of commands on one connection when some are sent from a Netty I/O thread. Lettuce writes a command
 * sent on its connection's event loop at once, ahead of the commands other threads queued on that loop, so relock
 * never sends from an I/O thread: these tests run a caller's callback on the one I/O thread of a caller's Lettuce
 * client while a command of relock's waits behind it, and check that what relock sends from there comes after; and
 * that what a caller calls there hands its work to the client's event executors without waiting for them.
 */
@Tag("redis")
class IoThreadOrderTest extends OneServerTestBase {

    private final List<RedisClient> callersClients = new ArrayList<>();
    private final List<ClientResources> callersResources = new ArrayList<>();
    private ClientResources resources;

    @AfterAll
    void shutDownCallersClients() {
        // after the base class closed the relock clients on them (after each test)
        callersClients.forEach(client -> client.shutdown(Duration.ZERO, Duration.ofSeconds(2)));
        callersResources.forEach(each -> each.shutdown(0, 2, TimeUnit.SECONDS));
    }

    /** A relock client on a caller's Lettuce client with one I/O thread, which every connection of it shares. */
    private RelockClient onOneIoThread() {
        resources = DefaultClientResources.builder().ioThreadPoolSize(1).computationThreadPoolSize(2).build();
        callersResources.add(resources);
        RedisClient callers = RedisClient.create(resources, redis.uri());
        callersClients.add(callers);
        return newClient(builder -> RelockClient.builder().redisClient(callers));
    }

    /** The one I/O thread of {@link #onOneIoThread}'s Lettuce client (the provider hands out the group it uses). */
    private EventLoop theIoThread() {
        EventLoopGroup group = resources.eventLoopGroupProvider().allocate(Transports.eventLoopGroupClass());
        return group.next();
    }

    @Test
    void aWaitCancelledOnAnIoThreadIsWithdrawnAfterTheAttemptItUndoes() throws Exception {
        RelockLock lock = onOneIoThread().lock("cancelled-on-io");
        // the script is cached: no NOSCRIPT fallback of the attempt comes later
        assertThat(lock.tryLock()).isTrue();
        lock.unlock();

        CountDownLatch stalled = new CountDownLatch(1);
        CountDownLatch attemptSent = new CountDownLatch(1);
        AtomicReference<CompletableFuture<Optional<LockHandle>>> waiting = new AtomicReference<>();
        CompletableFuture<Boolean> cancelled = new CompletableFuture<>();
        theIoThread().execute(() -> {
            // a caller's callback on the I/O thread; the attempt is queued behind it on the same loop
            stalled.countDown();
            try {
                attemptSent.await();
                cancelled.complete(waiting.get().cancel(false));
            } catch (Throwable e) {
                cancelled.completeExceptionally(e);
            }
        });
        stalled.await();
        waiting.set(lock.tryAcquireAsync(Duration.ofMinutes(1)).toCompletableFuture());
        attemptSent.countDown();

        assertThat(cancelled.get(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        // written first, the withdraw finds nothing to undo and the attempt then takes the lock for an owner nobody
        // has, for a whole default lease (30 s)
        await().atMost(HANG).until(() -> !lock.isLocked());
    }

    @Test
    void aWaitingAcquisitionCompletesOffTheIoThreads() throws Exception {
        RelockClient client = onOneIoThread();
        RelockLock held = newClient().lock("woken");
        held.lock();
        CompletableFuture<Boolean> completedOnIo = client.lock("woken").acquireAsync().toCompletableFuture()
                .thenApply(handle -> {
                    boolean onIo = ThreadExecutorMap.currentExecutor() instanceof EventLoop;
                    handle.close();
                    return onIo;
                });
        held.unlock();
        // woken by the release's message and answered by Redis, both on I/O threads: handled elsewhere
        assertThat(completedOnIo.get(HANG.toMillis(), TimeUnit.MILLISECONDS)).isFalse();
    }

    /**
     * A cancel on an I/O thread (a Reactor cancel, a WebFlux disconnect) is the acquisition's next event, queued: it
     * returns while every event executor of the client is busy, where it used to hold that I/O thread, and every
     * reply on it, until one was free. Once they are, the waiter leaves the queue and nothing is held, also when the
     * holder released meanwhile and the lock was handed over to the waiter, before or after the cancel.
     */
    @ParameterizedTest(name = "released meanwhile: {0}")
    @ValueSource(booleans = {false, true})
    void aCancelOnAnIoThreadReturnsWithoutWaitingForTheEventExecutors(boolean releasedMeanwhile) throws Exception {
        String name = "cancelled-while-executors-busy";
        RelockLock lock = onOneIoThread().lock(name);
        RelockLock holder = newClient().lock(name);
        holder.lock();
        CompletableFuture<Optional<LockHandle>> waiting =
                lock.tryAcquireAsync(Duration.ofMinutes(1)).toCompletableFuture();
        await().atMost(HANG).until(() -> queue(name).size() == 1);

        CountDownLatch busy = new CountDownLatch(resources.computationThreadPoolSize());
        CountDownLatch free = new CountDownLatch(1);
        for (EventExecutor executor : resources.eventExecutorGroup()) {
            executor.execute(() -> {
                busy.countDown();
                try {
                    free.await(3 * HANG.toMillis(), TimeUnit.MILLISECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
        }
        CompletableFuture<Boolean> cancelled = new CompletableFuture<>();
        try {
            assertThat(busy.await(HANG.toMillis(), TimeUnit.MILLISECONDS)).as("every event executor busy").isTrue();
            if (releasedMeanwhile) {
                // handed over to the waiter in Redis; its wake-up waits for an executor, as the cancel will
                holder.unlock();
            }
            theIoThread().execute(() -> cancelled.complete(waiting.cancel(false)));
            assertThat(cancelled.get(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        } finally {
            free.countDown();
        }

        assertThat(waiting).isCancelled();
        await().atMost(HANG).until(() -> queue(name).isEmpty());
        if (!releasedMeanwhile) {
            // a waiter still queued would be handed the lock by this release
            holder.unlock();
        }
        await().atMost(HANG).until(() -> !lock.isLocked());
    }
}
