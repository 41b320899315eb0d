package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Several clients (each with its own connections, as separate processes would have) and several
 * threads per client contend for one lock: no update of a non-atomic counter is lost, never two
 * critical sections overlap, and fencing tokens rise in the order the critical sections ran.
 */
class MutualExclusionTest extends OneServerTestBase {

    private static final int CLIENTS = 4;
    private static final int THREADS_PER_CLIENT = 4;

    /** Deliberately neither volatile nor atomic: only the lock keeps read-modify-write whole. */
    private long plainCounter;

    @Test
    void plainCounterLosesNoUpdateAndCriticalSectionsNeverOverlap() throws Exception {
        plainCounter = 0;
        int incrementsPerThread = 200;
        Contention contention = new Contention();
        List<CompletableFuture<Void>> workers = new ArrayList<>();
        CountDownLatch start = new CountDownLatch(1);
        for (int c = 0; c < CLIENTS; c++) {
            RelockLock lock = newClient().lock("counter");
            for (int t = 0; t < THREADS_PER_CLIENT; t++) {
                // half the threads use lock()/unlock(), half try-with-resources handles
                boolean useHandles = t % 2 == 1;
                workers.add(inNewThread("client" + c + "-thread" + t, () -> {
                    start.await();
                    for (int i = 0; i < incrementsPerThread; i++) {
                        if (useHandles) {
                            try (LockHandle held = lock.acquire()) {
                                contention.criticalSection(held.fencingToken(), () -> plainCounter++);
                            }
                        } else {
                            lock.lock();
                            try {
                                contention.criticalSection(lock.fencingToken().orElseThrow(), () -> plainCounter++);
                            } finally {
                                lock.unlock();
                            }
                        }
                    }
                    return null;
                }));
            }
        }
        start.countDown();
        CompletableFuture.allOf(workers.toArray(CompletableFuture[]::new)).get();

        int expected = CLIENTS * THREADS_PER_CLIENT * incrementsPerThread;
        assertThat(contention.overlaps).as("critical sections entered while another was inside").hasValue(0);
        assertThat(plainCounter).as("increments of the plain counter").isEqualTo(expected);
        assertThat(contention.tokens()).hasSize(expected);
        assertThat(contention.tokens()).as("fencing tokens in critical-section order").isSorted()
                .doesNotHaveDuplicates();
    }

    @Test
    void counterInRedisUpdatedWithGetThenSetLosesNoUpdate() throws Exception {
        int incrementsPerThread = 50;
        String counterKey = "test:counter";
        admin().set(counterKey, "0");
        Contention contention = new Contention();
        List<CompletableFuture<Void>> workers = new ArrayList<>();
        CountDownLatch start = new CountDownLatch(1);
        RedisClient plainLettuce = RedisClient.create(redis.uri());
        try {
            for (int c = 0; c < CLIENTS; c++) {
                RelockLock lock = newClient().lock("redis-counter");
                StatefulRedisConnection<String, String> connection = plainLettuce.connect();
                RedisCommands<String, String> counter = connection.sync();
                for (int t = 0; t < THREADS_PER_CLIENT; t++) {
                    workers.add(inNewThread("client" + c + "-thread" + t, () -> {
                        start.await();
                        for (int i = 0; i < incrementsPerThread; i++) {
                            try (LockHandle held = lock.acquire()) {
                                contention.criticalSection(held.fencingToken(), () -> {
                                    long value = Long.parseLong(counter.get(counterKey));
                                    counter.set(counterKey, Long.toString(value + 1));
                                });
                            }
                        }
                        return null;
                    }));
                }
            }
            start.countDown();
            CompletableFuture.allOf(workers.toArray(CompletableFuture[]::new)).get();
        } finally {
            plainLettuce.shutdown();
        }

        int expected = CLIENTS * THREADS_PER_CLIENT * incrementsPerThread;
        assertThat(contention.overlaps).as("critical sections entered while another was inside").hasValue(0);
        assertThat(admin().get(counterKey)).as("counter in Redis").isEqualTo(Integer.toString(expected));
        assertThat(contention.tokens()).hasSize(expected).isSorted().doesNotHaveDuplicates();
    }

    /** Watches critical sections: who is inside, and the fencing tokens in the order they ran. */
    static final class Contention {
        final AtomicInteger inside = new AtomicInteger();
        final AtomicInteger overlaps = new AtomicInteger();
        private final ConcurrentLinkedQueue<Long> tokens = new ConcurrentLinkedQueue<>();

        List<Long> tokens() {
            return new ArrayList<>(tokens);
        }

        void criticalSection(long fencingToken, Runnable work) {
            if (inside.incrementAndGet() != 1) {
                overlaps.incrementAndGet();
            }
            try {
                // added while inside: if sections never overlap, the queue's order is theirs
                tokens.add(fencingToken);
                work.run();
            } finally {
                inside.decrementAndGet();
            }
        }
    }
}
