package dev.relock.bench;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReadWriteLock;
import org.HdrHistogram.Histogram;

/**
 * The two measuring loops. Each run starts its threads, opens a start gate, lets them work until a
 * deadline fixed before the gate opened, and counts only what finished before it; each thread keeps
 * its own histogram, merged at the end, so the loops share nothing but what they measure.
 */
final class Loops {

    private static final com.sun.management.OperatingSystemMXBean OS =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

    /**
     * S1/S2: every thread takes and gives up its own lock (no contention) as fast as it can.
     *
     * @param locks one per thread, each on its own name
     */
    static Results.Run pairs(List<Lock> locks, Duration duration, ServerStats server) throws Exception {
        int threads = locks.size();
        long[] counts = new long[threads];
        Histogram[] histograms = new Histogram[threads];
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CountDownLatch ready = new CountDownLatch(threads);
        CountDownLatch gate = new CountDownLatch(1);
        long[] deadline = new long[1];
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int me = t;
            Lock lock = locks.get(t);
            histograms[t] = Stats.newHistogram();
            workers.add(started("bench-pairs-" + t, lock, () -> {
                Histogram histogram = histograms[me];
                long n = 0;
                try {
                    ready.countDown();
                    gate.await();
                    long end = deadline[0];
                    while (true) {
                        long start = System.nanoTime();
                        if (start - end >= 0) {
                            break;
                        }
                        lock.lock();
                        lock.unlock();
                        long done = System.nanoTime();
                        if (done - end < 0) {
                            n++;
                            Stats.record(histogram, done - start);
                        }
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                } finally {
                    counts[me] = n;
                }
            }));
        }
        return finish(workers, ready, gate, deadline, duration, server, failure, run -> {
            run.latency = Stats.newHistogram();
            for (int t = 0; t < threads; t++) {
                run.ops += counts[t];
                run.latency.add(histograms[t]);
            }
            run.perThread = counts;
        });
    }

    /**
     * S3/S3p: every thread contends for one name through its own lock object (of one client, or of
     * a client each). The critical section does a non-atomic increment of a shared counter and
     * notes who held the lock and when it let go, so the next holder can time the handoff.
     */
    static Results.Run contention(List<Lock> locks, Duration duration, ServerStats server) throws Exception {
        int threads = locks.size();
        long[] counts = new long[threads];
        long[] self = new long[threads];
        Histogram[] handoffs = new Histogram[threads];
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        Shared shared = new Shared();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CountDownLatch ready = new CountDownLatch(threads);
        CountDownLatch gate = new CountDownLatch(1);
        long[] deadline = new long[1];
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int me = t;
            Lock lock = locks.get(t);
            handoffs[t] = Stats.newHistogram();
            workers.add(started("bench-contend-" + t, lock, () -> {
                Histogram handoff = handoffs[me];
                try {
                    ready.countDown();
                    gate.await();
                    long end = deadline[0];
                    while (true) {
                        lock.lock();
                        long acquired = System.nanoTime();
                        try {
                            if (acquired - end >= 0) {
                                break;
                            }
                            if (inside.incrementAndGet() != 1) {
                                overlaps.incrementAndGet();
                            }
                            int previous = shared.lastHolder;
                            if (previous == me) {
                                self[me]++;
                            } else if (previous >= 0) {
                                Stats.record(handoff, acquired - shared.releasedAt);
                            }
                            long value = shared.counter; // deliberately not atomic: overlapping holders lose updates
                            shared.counter = value + 1;
                            counts[me]++;
                            inside.decrementAndGet();
                            shared.lastHolder = me;
                            shared.releasedAt = System.nanoTime();
                        } finally {
                            lock.unlock();
                        }
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }));
        }
        return finish(workers, ready, gate, deadline, duration, server, failure, run -> {
            run.handoff = Stats.newHistogram();
            for (int t = 0; t < threads; t++) {
                run.ops += counts[t];
                run.selfReacquired += self[t];
                run.handoff.add(handoffs[t]);
            }
            run.perThread = counts;
            run.overlaps = overlaps.get();
            run.counter = shared.counter;
            run.increments = run.ops;
        });
    }

    /**
     * S5: every thread (one per client) takes the read lock 9 times in 10 and the write lock
     * otherwise, in a random order of its own. Writers increment an unprotected counter; every
     * holder checks that no writer is inside with it (and a writer, that nobody is).
     */
    static Results.Run readWrite(List<ReadWriteLock> locks, Duration duration, ServerStats server) throws Exception {
        int threads = locks.size();
        long[] counts = new long[threads];
        long[] writes = new long[threads];
        Histogram[] histograms = new Histogram[threads];
        AtomicInteger readersInside = new AtomicInteger();
        AtomicInteger writersInside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        Shared shared = new Shared();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CountDownLatch ready = new CountDownLatch(threads);
        CountDownLatch gate = new CountDownLatch(1);
        long[] deadline = new long[1];
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int me = t;
            ReadWriteLock rw = locks.get(t);
            histograms[t] = Stats.newHistogram();
            workers.add(started("bench-rw-" + t, rw, () -> {
                SplittableRandom random = new SplittableRandom(me * 7919L + 1);
                Histogram histogram = histograms[me];
                try {
                    ready.countDown();
                    gate.await();
                    long end = deadline[0];
                    while (true) {
                        boolean reader = random.nextInt(10) != 0;
                        Lock lock = reader ? rw.readLock() : rw.writeLock();
                        long start = System.nanoTime();
                        if (start - end >= 0) {
                            break;
                        }
                        lock.lock();
                        try {
                            if (reader) {
                                readersInside.incrementAndGet();
                                if (writersInside.get() != 0) {
                                    overlaps.incrementAndGet();
                                }
                                readersInside.decrementAndGet();
                            } else {
                                if (writersInside.incrementAndGet() != 1 || readersInside.get() != 0) {
                                    overlaps.incrementAndGet();
                                }
                                long value = shared.counter; // deliberately not atomic
                                shared.counter = value + 1;
                                writes[me]++;
                                writersInside.decrementAndGet();
                            }
                        } finally {
                            lock.unlock();
                        }
                        long done = System.nanoTime();
                        if (done - end < 0) {
                            counts[me]++;
                            Stats.record(histogram, done - start);
                        }
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }));
        }
        return finish(workers, ready, gate, deadline, duration, server, failure, run -> {
            run.latency = Stats.newHistogram();
            for (int t = 0; t < threads; t++) {
                run.ops += counts[t];
                run.writes += writes[t];
                run.latency.add(histograms[t]);
            }
            run.perThread = counts;
            run.overlaps = overlaps.get();
            run.counter = shared.counter;
            run.increments = run.writes;
        });
    }

    /** What the holders of one contended lock share; written only inside the critical section. */
    private static final class Shared {
        volatile long counter;
        volatile int lastHolder = -1;
        volatile long releasedAt;
    }

    static Thread started(String name, Runnable body) {
        return started(name, null, body);
    }

    /**
     * A started daemon thread whose context class loader is the one that loaded {@code lock}'s class (when given): a
     * worker of a library in a class loader of its own runs as a thread of an application that holds that library,
     * where what the library looks up by the context loader (Lettuce's JFR events, when a connection opens lazily) is
     * its own and not the harness's.
     */
    static Thread started(String name, Object lock, Runnable body) {
        Thread thread = new Thread(body, name);
        if (lock != null) {
            thread.setContextClassLoader(lock.getClass().getClassLoader());
        }
        thread.setDaemon(true);
        thread.start();
        return thread;
    }

    private interface Collect {
        void into(Results.Run run);
    }

    private static Results.Run finish(List<Thread> workers, CountDownLatch ready, CountDownLatch gate,
            long[] deadline, Duration duration, ServerStats server, AtomicReference<Throwable> failure,
            Collect collect) throws Exception {
        if (!ready.await(60, TimeUnit.SECONDS)) {
            throw new IllegalStateException("bench threads did not start");
        }
        double serverCpu = server.cpuSeconds();
        long serverCalls = server.totalCalls();
        long clientCpu = OS.getProcessCpuTime();
        deadline[0] = System.nanoTime() + duration.toNanos();
        gate.countDown();
        long joinBy = deadline[0] + TimeUnit.SECONDS.toNanos(120);
        for (Thread worker : workers) {
            worker.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(joinBy - System.nanoTime())));
            if (worker.isAlive()) {
                throw new IllegalStateException(worker.getName() + " still runs 2 minutes after the deadline");
            }
        }
        Results.Run run = new Results.Run();
        run.seconds = duration.toNanos() / 1e9;
        run.serverCpuSeconds = server.cpuSeconds() - serverCpu;
        run.serverCalls = server.totalCalls() - serverCalls;
        run.clientCpuSeconds = (OS.getProcessCpuTime() - clientCpu) / 1e9;
        if (failure.get() != null) {
            Throwable e = failure.get();
            throw new IllegalStateException(e.getClass().getSimpleName() + ": " + e.getMessage(), e);
        }
        collect.into(run);
        return run;
    }

    private Loops() {
    }
}
