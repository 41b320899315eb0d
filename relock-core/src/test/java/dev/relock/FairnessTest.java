package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;

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
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Contending clients are served in the order of the waiter queue in Redis, read inside each critical section
 * (the rest of fairness, on every topology, is in contract/LockContract).
 */
@Tag("redis")
class FairnessTest extends OneServerTestBase {

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
