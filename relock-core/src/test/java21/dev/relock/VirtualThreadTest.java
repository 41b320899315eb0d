package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingStream;
import org.junit.jupiter.api.Test;

/**
 * Thousands of virtual threads contend for a few locks (JDK 21+ only; compiled from src/test/java21
 * by the jdk21 profile). No thread is spent per waiter: the waiting threads unmount from their
 * carriers, so a fresh virtual thread still runs at once while thousands wait, and none of them is
 * ever pinned to its carrier. Mutual exclusion and strictly increasing fencing tokens hold per lock.
 */
class VirtualThreadTest extends OneServerTestBase {

    private static final int THREADS = 5_000;
    private static final int LOCKS = 4;
    /** Generous: a hang or a thread per waiter exceeds it, slow machines do not. */
    private static final Duration ALL_DONE = Duration.ofMinutes(3);

    @Test
    void thousandsOfVirtualThreadsShareFewLocksWithoutPinningTheirCarriers() throws Exception {
        List<RelockClient> clients = List.of(newClient(), newClient());
        AtomicInteger[] inside = new AtomicInteger[LOCKS];
        AtomicLong[] lastToken = new AtomicLong[LOCKS];
        for (int i = 0; i < LOCKS; i++) {
            inside[i] = new AtomicInteger();
            lastToken[i] = new AtomicLong();
        }
        AtomicInteger overlaps = new AtomicInteger();
        AtomicInteger tokensOutOfOrder = new AtomicInteger();
        AtomicInteger done = new AtomicInteger();
        CountDownLatch go = new CountDownLatch(1);
        List<RecordedEvent> pinned = new CopyOnWriteArrayList<>();

        try (RecordingStream events = new RecordingStream()) {
            events.enable("jdk.VirtualThreadPinned").withoutThreshold().withStackTrace();
            events.onEvent("jdk.VirtualThreadPinned", pinned::add);
            events.startAsync();

            List<Future<?>> work = new ArrayList<>();
            try (ExecutorService virtualThreads = Executors.newVirtualThreadPerTaskExecutor()) {
                for (int i = 0; i < THREADS; i++) {
                    int lockNumber = i % LOCKS;
                    RelockLock lock = clients.get(i % clients.size()).lock("virtual-" + lockNumber);
                    work.add(virtualThreads.submit(() -> {
                        go.await();
                        try (LockHandle held = lock.acquire()) {
                            if (inside[lockNumber].incrementAndGet() != 1) {
                                overlaps.incrementAndGet();
                            }
                            if (held.fencingToken() <= lastToken[lockNumber].getAndSet(held.fencingToken())) {
                                tokensOutOfOrder.incrementAndGet();
                            }
                            Thread.yield();
                            inside[lockNumber].decrementAndGet();
                        }
                        done.incrementAndGet();
                        return null;
                    }));
                }
                long start = System.nanoTime();
                go.countDown();

                // while thousands wait, the carriers are free for anybody else
                await().atMost(ALL_DONE).until(() -> waiting() >= THREADS / 5 || done.get() == THREADS);
                long freshStart = System.nanoTime();
                CountDownLatch freshRan = new CountDownLatch(1);
                Thread.ofVirtual().start(freshRan::countDown);
                assertThat(freshRan.await(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
                long freshMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - freshStart);
                assertThat(freshMillis).as("a fresh virtual thread waited for a carrier").isLessThan(2_000);

                for (Future<?> future : work) {
                    future.get(Math.max(1, ALL_DONE.toNanos() - (System.nanoTime() - start)), TimeUnit.NANOSECONDS);
                }
                System.out.printf("%d virtual threads, %d locks: %d ms; a fresh virtual thread ran after %d ms%n",
                        THREADS, LOCKS, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start), freshMillis);
            }
            // delivers what was recorded so far
            events.stop();
        }
        assertThat(done.get()).isEqualTo(THREADS);
        assertThat(overlaps.get()).as("holders inside one lock at the same time").isZero();
        assertThat(tokensOutOfOrder.get()).as("fencing tokens not strictly increasing").isZero();
        assertThat(pinned).as("virtual threads pinned to their carrier").isEmpty();
        for (int i = 0; i < LOCKS; i++) {
            assertThat(queue("virtual-" + i)).isEmpty();
        }
    }

    private long waiting() {
        long waiting = 0;
        for (int i = 0; i < LOCKS; i++) {
            waiting += queue("virtual-" + i).size();
        }
        return waiting;
    }
}
