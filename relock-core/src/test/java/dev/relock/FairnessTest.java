package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Waiters from every client are served in arrival order; a thread that asks again goes to the back. */
class FairnessTest extends OneServerTestBase {

    @Test
    void waitersFromDifferentClientsAcquireInArrivalOrder() throws Exception {
        int waiters = 5;
        RelockLock first = newClient().lock("fifo");
        first.lock();
        List<Integer> order = new CopyOnWriteArrayList<>();
        List<CompletableFuture<Void>> done = new ArrayList<>();
        for (int i = 0; i < waiters; i++) {
            int index = i;
            RelockLock lock = newClient().lock("fifo");
            done.add(inNewThread("waiter-" + i, () -> {
                lock.lock();
                try {
                    order.add(index);
                } finally {
                    lock.unlock();
                }
                return null;
            }));
            // the next waiter starts only once this one is verifiably in line
            await().atMost(HANG).until(() -> queue("fifo").size() == index + 1);
        }
        assertThat(order).as("nobody acquires while the first holder holds").isEmpty();

        long released = System.nanoTime();
        first.unlock();
        CompletableFuture.allOf(done.toArray(CompletableFuture[]::new)).get(HANG.toMillis(), TimeUnit.MILLISECONDS);

        assertThat(order).containsExactly(0, 1, 2, 3, 4);
        // every handoff goes by message: far less than one 30 s lease, which a waiter would sit out otherwise
        assertThat(millisSince(released)).isLessThan(HANG.toMillis());
        assertThat(queue("fifo")).isEmpty();
    }

    @Test
    void aThreadThatReleasesAndAsksAgainGoesBehindTheWaiters() throws Exception {
        RelockLock mine = newClient().lock("to-the-back");
        RelockLock theirs = newClient().lock("to-the-back");
        List<String> order = new CopyOnWriteArrayList<>();
        CountDownLatch letGo = new CountDownLatch(1);
        mine.lock();
        CompletableFuture<Void> waiter = inNewThread("waiter", () -> {
            theirs.lock();
            try {
                order.add("waiter");
                letGo.await(); // holds on until the releaser has tried to jump the queue
            } finally {
                theirs.unlock();
            }
            return null;
        });
        await().atMost(HANG).until(() -> queue("to-the-back").size() == 1);

        mine.unlock();
        // whether the waiter is still on its way or already holds the lock: not the releaser's turn
        boolean jumped = mine.tryLock();
        if (jumped) {
            mine.unlock();
        }
        assertThat(jumped).as("tryLock right after release, with a waiter in line").isFalse();
        letGo.countDown();
        assertThat(mine.tryLock(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        order.add("releaser");
        mine.unlock();
        resultOf(waiter);

        assertThat(order).containsExactly("waiter", "releaser");
    }

    /**
     * Four clients loop lock/unlock, asking again at once after each release. What FIFO guarantees
     * here, and this test checks: whoever is in the queue while a critical section runs acquires
     * next, in queue order, before anybody who joins later. (That no client gets two turns in a row
     * is not guaranteed: a thread that is slow to ask again may find the queue empty.)
     */
    @Test
    void contendingClientsAreServedInQueueOrderAndNoneStarves() throws Exception {
        int clients = 4;
        int rounds = 50;
        CountDownLatch start = new CountDownLatch(1);
        List<String> holders = new CopyOnWriteArrayList<>();
        List<List<String>> queuesSeen = new CopyOnWriteArrayList<>();
        Map<String, Integer> ownerToClient = new ConcurrentHashMap<>();
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        List<CompletableFuture<Integer>> done = new ArrayList<>();
        for (int c = 0; c < clients; c++) {
            int index = c;
            // a long grace: a head that is slow to take its turn must not be skipped in this test
            RelockClient client = newClient(b -> b.handoffGrace(Duration.ofSeconds(5)));
            RelockLock lock = client.lock("contended");
            RelockLock warmUp = client.lock("warm-up-" + c);
            done.add(inNewThread("contender-" + c, () -> {
                ownerToClient.put(client.clientId() + ":" + Thread.currentThread().getId(), index);
                warmUp.lock(); // scripts loaded, connections warm before the race starts
                warmUp.unlock();
                start.await();
                int completed = 0;
                for (int round = 0; round < rounds; round++) {
                    lock.lock();
                    try {
                        if (inside.incrementAndGet() != 1) {
                            overlaps.incrementAndGet();
                        }
                        holders.add(client.clientId() + ":" + Thread.currentThread().getId());
                        // who is in line while this section runs (nobody leaves the queue but by acquiring)
                        queuesSeen.add(queue("contended"));
                        inside.decrementAndGet();
                    } finally {
                        lock.unlock();
                    }
                    completed++;
                }
                return completed;
            }));
        }
        start.countDown();
        for (CompletableFuture<Integer> contender : done) {
            assertThat(contender.get(30, TimeUnit.SECONDS)).as("rounds completed").isEqualTo(rounds);
        }

        assertThat(overlaps).hasValue(0);
        assertThat(holders).hasSize(clients * rounds);
        int sectionsWithWaiters = 0;
        for (int k = 0; k < holders.size(); k++) {
            List<String> line = queuesSeen.get(k);
            if (line.isEmpty()) {
                continue;
            }
            sectionsWithWaiters++;
            assertThat(line).as("queue during section %d", k).doesNotContain(holders.get(k));
            int end = Math.min(holders.size(), k + 1 + line.size());
            assertThat(holders.subList(k + 1, end))
                    .as("holders after section %d, whose queue was %s", k, line)
                    .isEqualTo(line.subList(0, end - k - 1));
        }
        // the order check above means something only if the clients really contended
        assertThat(sectionsWithWaiters).as("sections with a queue").isGreaterThan(clients * rounds / 4);
        assertThat(ownerToClient).hasSize(clients);
    }
}
