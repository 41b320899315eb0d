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
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Thousands of virtual threads contend for a few locks (JDK 21+ only; compiled from src/test/java21
 * by the jdk21 profile). No thread is spent per waiter: the waiting threads unmount from their
 * carriers, so a fresh virtual thread still runs at once while thousands wait, and relock never
 * blocks one while it is pinned to its carrier (JFR's jdk.VirtualThreadPinned). Mutual exclusion
 * and strictly increasing fencing tokens hold per lock.
 */
@Tag("redis")
class VirtualThreadTest extends OneServerTestBase {

    private static final int THREADS = 5_000;
    private static final int LOCKS = 4;
    /** Generous: a hang or a thread per waiter exceeds it, slow machines do not. */
    private static final Duration ALL_DONE = Duration.ofMinutes(3);

    @Test
    void thousandsOfVirtualThreadsShareFewLocksWithoutPinningTheirCarriers() throws Exception {
        // a generous command timeout: 5,000 first attempts arrive at once on a shared, busy machine
        List<RelockClient> clients = List.of(newClient(b -> b.commandTimeout(Duration.ofSeconds(30))),
                newClient(b -> b.commandTimeout(Duration.ofSeconds(30))));
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

        // loading a class pins a virtual thread (a JDK limitation, not relock's): load them first
        contend(clients, 50);

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
                assertThat(freshMillis).as("a fresh virtual thread waited for a carrier").isLessThan(5_000);

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
        // Netty may pin briefly inside its own code when thousands of writers fill the channel's
        // buffer at once (seen once in six runs on JDK 25: a selector wake-up); reported, not failed
        pinned.stream().filter(event -> !blockedInRelock(event))
                .forEach(event -> System.out.println("pinned outside relock: " + describe(event)));
        assertThat(pinned.stream().filter(VirtualThreadTest::blockedInRelock).map(VirtualThreadTest::describe).toList())
                .as("virtual threads pinned to their carrier where relock blocks").isEmpty();
        for (int i = 0; i < LOCKS; i++) {
            assertThat(queue("virtual-" + i)).isEmpty();
        }
    }

    /** Virtual threads of two clients await one condition and all come back, holding the lock one at a time. */
    @Test
    void virtualThreadsAwaitAConditionAndAreSignalled() throws Exception {
        List<RelockClient> clients = List.of(newClient(), newClient());
        int waiters = 50;
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        RelockLock signaller = clients.get(0).lock("virtual-condition");
        try (ExecutorService virtualThreads = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<?>> work = new ArrayList<>();
            for (int i = 0; i < waiters; i++) {
                RelockLock lock = clients.get(i % clients.size()).lock("virtual-condition");
                work.add(virtualThreads.submit(() -> {
                    lock.lock();
                    try {
                        lock.newCondition().await();
                        if (inside.incrementAndGet() != 1) {
                            overlaps.incrementAndGet();
                        }
                        Thread.yield();
                        inside.decrementAndGet();
                    } finally {
                        lock.unlock();
                    }
                    return null;
                }));
            }
            await().atMost(ALL_DONE).until(() -> signaller.newCondition().waiters().size() == waiters);
            signaller.lock();
            signaller.newCondition().signalAll();
            signaller.unlock();
            for (Future<?> future : work) {
                future.get(ALL_DONE.toMillis(), TimeUnit.MILLISECONDS);
            }
        }
        assertThat(overlaps.get()).as("signalled waiters inside the lock at the same time").isZero();
        assertThat(queue("virtual-condition")).isEmpty();
    }

    /** A small round of virtual threads through the same paths: acquire, queue, wake-up, release. */
    private static void contend(List<RelockClient> clients, int threads) throws Exception {
        try (ExecutorService virtualThreads = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<?>> work = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                RelockLock lock = clients.get(i % clients.size()).lock("virtual-warm-up");
                work.add(virtualThreads.submit(() -> {
                    try (LockHandle held = lock.acquire()) {
                        Thread.yield();
                    }
                    return null;
                }));
            }
            for (Future<?> future : work) {
                future.get(HANG.toMillis(), TimeUnit.MILLISECONDS);
            }
        }
    }

    /** Whether the frame that blocked while pinned is relock's own. */
    private static boolean blockedInRelock(RecordedEvent pinned) {
        return pinned.getStackTrace() == null || pinned.getStackTrace().getFrames().isEmpty()
                || pinned.getStackTrace().getFrames().get(0).getMethod().getType().getName().startsWith("dev.relock.");
    }

    private static String describe(RecordedEvent pinned) {
        StringBuilder text = new StringBuilder(pinned.getString("blockingOperation"))
                .append(" (").append(pinned.getString("pinnedReason")).append("), ")
                .append(pinned.getDuration().toMillis()).append(" ms:");
        pinned.getStackTrace().getFrames().forEach(frame -> text.append("\n  ")
                .append(frame.getMethod().getType().getName()).append('.').append(frame.getMethod().getName())
                .append(':').append(frame.getLineNumber()));
        return text.toString();
    }

    private long waiting() {
        long waiting = 0;
        for (int i = 0; i < LOCKS; i++) {
            waiting += queue("virtual-" + i).size();
        }
        return waiting;
    }
}
