package dev.relock.bench;

import dev.relock.testredis.RedisServer;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Lock;

/**
 * S4: one client holds N locks at once with its watchdog on, a short lease so renewals happen
 * while we watch.
 *
 * <p>Heap per held lock is retained heap, not allocation: used heap after a full GC
 * ({@code System.gc()} until two readings agree) while the N locks are held, minus the same
 * reading with the client connected and warmed up but nothing held, divided by N. It counts the
 * lock objects the application must keep to unlock later (Redisson's RLock, Spring's cached
 * RedisLock, relock's view) and whatever the library keeps per hold (hold tables, watchdog
 * entries, timers). The names are made before the first reading, so they are not counted.
 * Threads: live threads after connecting minus before (the client's own), and live threads while
 * holding minus after connecting (what holding adds). Renewal traffic: INFO commandstats deltas
 * over a window with nothing but renewals going on; "commands" counts every command Redis ran,
 * including those inside scripts, "round trips" only what clients sent (EVAL, EVALSHA, PING, ...).
 */
final class HeldLocks {

    private static final int WORKERS = 16;
    /** A subject that cannot lock N names in this long is reported as such, not waited for. */
    private static final Duration LOCK_ALL_LIMIT = Duration.ofSeconds(120);
    private static final MemoryMXBean MEMORY = ManagementFactory.getMemoryMXBean();
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    static Results.Held run(Subject subject, String redisUri, RedisServer server, int count, Duration lease,
            Duration window) throws Exception {
        Results.Held held = new Results.Held();
        held.label = subject.label();
        held.family = subject.family();
        held.locks = count;
        held.leaseMillis = lease.toMillis();
        server.flushAll();
        ServerStats stats = new ServerStats(server);
        String[] names = new String[count];
        for (int i = 0; i < count; i++) {
            names[i] = "s4:" + i;
        }
        Lock[][] perWorker = new Lock[WORKERS][];
        for (int w = 0; w < WORKERS; w++) {
            perWorker[w] = new Lock[(count - w + WORKERS - 1) / WORKERS];
        }
        settledHeap();
        int threadsBefore = THREADS.getThreadCount();
        try (Subject.Client client = subject.connect(redisUri, lease)) {
            Lock warm = warmUp(client);
            held.threadsOfClient = THREADS.getThreadCount() - threadsBefore;
            AtomicReference<Throwable> failure = new AtomicReference<>();
            AtomicLong unlockFailures = new AtomicLong();
            AtomicBoolean gaveUp = new AtomicBoolean();
            long[] giveUpAt = new long[1];
            AtomicReference<String> firstUnlockFailure = new AtomicReference<>();
            CyclicBarrier phase = new CyclicBarrier(WORKERS + 1);
            List<Thread> workers = new ArrayList<>();
            for (int w = 0; w < WORKERS; w++) {
                int me = w;
                workers.add(Loops.started("bench-held-" + w, warm, () -> {
                    Lock[] mine = perWorker[me];
                    try {
                        phase.await(10, TimeUnit.MINUTES); // start locking
                        for (int j = 0; j < mine.length; j++) {
                            if (System.nanoTime() - giveUpAt[0] > 0) {
                                gaveUp.set(true);
                                break;
                            }
                            Lock lock = client.lock(names[me + j * WORKERS]);
                            lock.lock();
                            mine[j] = lock;
                        }
                        phase.await(10, TimeUnit.MINUTES); // all held
                        phase.await(10, TimeUnit.MINUTES); // start unlocking
                        for (int j = 0; j < mine.length && mine[j] != null; j++) {
                            try {
                                mine[j].unlock();
                            } catch (RuntimeException e) {
                                if (unlockFailures.getAndIncrement() == 0) {
                                    firstUnlockFailure.set(Bench.describe(e));
                                }
                            }
                            mine[j] = null;
                        }
                        phase.await(10, TimeUnit.MINUTES); // all released
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                        phase.reset(); // wakes everybody at the barrier with BrokenBarrierException
                    }
                }));
            }
            long heapIdle = settledHeap();
            int threadsIdle = THREADS.getThreadCount();
            giveUpAt[0] = System.nanoTime() + LOCK_ALL_LIMIT.toNanos();
            await(phase, failure);
            long start = System.nanoTime();
            await(phase, failure);
            held.lockAllSeconds = (System.nanoTime() - start) / 1e9;
            if (gaveUp.get()) {
                long locked = Arrays.stream(perWorker).flatMap(Arrays::stream).filter(Objects::nonNull).count();
                held.error = String.format("locked only %,d of %,d in %d s; gave up", locked, count,
                        LOCK_ALL_LIMIT.toSeconds());
            }
            long heapHeld = settledHeap();
            held.threadsAddedByHolding = THREADS.getThreadCount() - threadsIdle;
            held.heapBytesPerLock = (double) (heapHeld - heapIdle) / count;

            Map<String, Long> before = stats.commandCalls();
            long windowStart = System.nanoTime();
            Thread.sleep(window.toMillis());
            Map<String, Long> after = stats.commandCalls();
            held.windowSeconds = (System.nanoTime() - windowStart) / 1e9;
            long commands = 0;
            long roundTrips = 0;
            for (Map.Entry<String, Long> entry : after.entrySet()) {
                long delta = entry.getValue() - before.getOrDefault(entry.getKey(), 0L);
                if (entry.getKey().equals("info")) {
                    continue; // our own reading
                }
                commands += delta;
                if (isScriptRunner(entry.getKey())) {
                    roundTrips += delta;
                }
            }
            held.commandsPerSecond = commands / held.windowSeconds;
            held.windowCommands = after.entrySet().stream()
                    .map(e -> Map.entry(e.getKey(), e.getValue() - before.getOrDefault(e.getKey(), 0L)))
                    .filter(e -> e.getValue() > 0 && !e.getKey().equals("info"))
                    .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                    .limit(6)
                    .map(e -> String.format("%s %,.0f/s", e.getKey(), e.getValue() / held.windowSeconds))
                    .collect(java.util.stream.Collectors.joining(", "));
            held.roundTripsPerSecond = roundTrips / held.windowSeconds;

            start = System.nanoTime();
            await(phase, failure);
            await(phase, failure);
            held.unlockAllSeconds = (System.nanoTime() - start) / 1e9;
            for (Thread worker : workers) {
                worker.join(TimeUnit.MINUTES.toMillis(2));
            }
            held.unlockFailures = unlockFailures.get();
            held.firstUnlockFailure = firstUnlockFailure.get();
            held.reportedLost = client.lostLeases();
            try {
                warm.unlock();
            } catch (RuntimeException e) {
                held.unlockFailures++;
            }
            if (failure.get() != null) {
                throw new IllegalStateException(String.valueOf(failure.get()), failure.get());
            }
        }
        return held;
    }

    /**
     * Round trips: scripts and plain commands sent by clients. Inside the renewal window no client
     * sends SET, GET, DEL or PEXPIRE itself (every subject renews by script), so counting only
     * the script-running commands and PING avoids counting a script's inner calls twice.
     */
    private static boolean isScriptRunner(String command) {
        return command.startsWith("eval") || command.startsWith("fcall") || command.equals("ping");
    }

    /**
     * Takes one lock and keeps it until the end, so lazy set-up (scripts, the watchdog) is done
     * before the first reading. Not lock+unlock cycles: in Redisson 3.52 and 4.3.1 every time a
     * client's held set goes empty and is filled again before the pending renewal timer fires, a
     * second renewal loop starts and never ends while locks are held, so cycling here would
     * multiply Redisson's renewal traffic (see the analysis).
     */
    private static Lock warmUp(Subject.Client client) {
        Lock lock = client.lock("s4-warm");
        lock.lock();
        return lock;
    }

    private static void await(CyclicBarrier phase, AtomicReference<Throwable> failure) throws Exception {
        try {
            phase.await(10, TimeUnit.MINUTES);
        } catch (Exception e) {
            Throwable cause = failure.get() != null ? failure.get() : e;
            throw new IllegalStateException("a holder thread failed: " + cause, cause);
        }
    }

    /** Used heap after full collections, once two readings in a row agree within 64 KiB. */
    static long settledHeap() throws InterruptedException {
        long last = Long.MAX_VALUE;
        for (int i = 0; i < 8; i++) {
            System.gc();
            Thread.sleep(100);
            long used = MEMORY.getHeapMemoryUsage().getUsed();
            if (Math.abs(used - last) < 64 * 1024) {
                return Math.min(used, last);
            }
            last = used;
        }
        return last;
    }

    private HeldLocks() {
    }
}
