package dev.relock.cli.demo;

import dev.relock.RedisUnavailableException;
import dev.relock.RelockException;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The engine behind {@code relock demo} and {@code relock verify}: worker processes (separate JVMs,
 * so the locks really cross processes) that increment counters in Redis with GET then SET, in
 * phases with and without the locks, and the numbers that come out.
 *
 * <pre>{@code
 * try (ContentionEngine engine = ContentionEngine.connect(uri, "relock", "demo", workload, progress)) {
 *     engine.startWorkers();
 *     RunResult locked = engine.run(true);
 *     RunResult unlocked = engine.run(false);
 * }
 * }</pre>
 *
 * <p>Design notes. The workers start once and run every phase, so JVM start-up is paid once and all
 * workers begin a phase within a few milliseconds of each other. Everything the engine creates is
 * undone on every path: {@link #close()} ends the workers (asking, then SIGKILL) and deletes every key
 * under the run's unique prefix; a JVM shutdown hook (Ctrl-C) does the same while it is open; and if
 * this JVM is killed outright, the workers see their stdin close and halt, and the data keys expire
 * after {@value WorkerProtocol#KEY_TTL_SECONDS} s. The engine is used by one thread; only the
 * shutdown hook may touch it from another, and it only kills processes and deletes keys.
 */
public final class ContentionEngine implements AutoCloseable {

    /** How long worker JVMs may take to start and connect (slow CI machines start JVMs slowly). */
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(60);
    /** How much longer than its duration a phase may take: an acquire or a command timing out. */
    private static final Duration PHASE_SLACK = Duration.ofSeconds(30);
    private static final long TICK_MILLIS = 100;
    /** Lease of the workers' holds: long enough for a paused JVM, short enough for a killed one. */
    private static final Duration LEASE = Duration.ofSeconds(10);

    private final String uri;
    private final Workload workload;
    private final RunKeyspace keyspace;
    private final Progress progress;
    private final List<WorkerProcess> workers = new CopyOnWriteArrayList<>(); // the hook reads it
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Thread shutdownHook;

    private ContentionEngine(String uri, Workload workload, RunKeyspace keyspace, Progress progress) {
        this.uri = uri;
        this.workload = workload;
        this.keyspace = keyspace;
        this.progress = progress;
        this.shutdownHook = new Thread(this::abort, "relock-demo-cleanup");
    }

    /**
     * Connects to Redis and picks the run's key prefix; {@link #startWorkers()} comes next.
     *
     * @param basePrefix the user's key prefix; the run's keys go under {@code <basePrefix>:<kind>-<random>}
     * @throws RedisUnavailableException if Redis cannot be reached
     */
    public static ContentionEngine connect(String uri, String basePrefix, String kind, Workload workload,
            Progress progress) {
        RunKeyspace keyspace = RunKeyspace.open(uri, basePrefix, kind);
        ContentionEngine engine = new ContentionEngine(uri, workload, keyspace, progress);
        Runtime.getRuntime().addShutdownHook(engine.shutdownHook);
        return engine;
    }

    /** The prefix of every key this run creates (and deletes at the end). */
    public String keyPrefix() {
        return keyspace.prefix();
    }

    /**
     * Starts the worker JVMs and returns once all of them are connected to Redis.
     *
     * @throws RedisUnavailableException if a worker cannot reach Redis
     * @throws RelockException if a worker fails to start
     */
    public void startWorkers() throws InterruptedException {
        progress.step("starting " + workload.workers() + " worker JVMs");
        for (int i = 0; i < workload.workers(); i++) {
            Map<String, String> config = new LinkedHashMap<>();
            config.put("uri", uri);
            config.put("prefix", keyspace.prefix());
            config.put("worker", Integer.toString(i));
            config.put("threads", Integer.toString(workload.threadsPerWorker()));
            config.put("locks", Integer.toString(workload.locks()));
            config.put("lease-ms", Long.toString(LEASE.toMillis()));
            try {
                workers.add(WorkerProcess.start(i, config));
            } catch (IOException e) {
                throw new RelockException("cannot start a worker JVM: " + e.getMessage(), e);
            }
        }
        awaitAll(workers.stream().map(WorkerProcess::ready).toList(), System.nanoTime() + READY_TIMEOUT.toNanos(),
                "the worker JVMs to start and connect", () -> { });
        progress.finish();
    }

    /**
     * Runs one phase for the workload's duration: with {@code locked}, every increment is made
     * holding a lock; without, the same increments race.
     *
     * @throws RedisUnavailableException if a worker lost Redis
     * @throws RelockException if a worker failed otherwise or the phase overran badly
     */
    public RunResult run(boolean locked) throws InterruptedException {
        keyspace.reset(workload.locks());
        long millis = workload.duration().toMillis();
        List<WorkerProcess.Phase> phases = new ArrayList<>();
        long start = System.nanoTime();
        for (WorkerProcess worker : workers) {
            phases.add(worker.run(locked, millis));
        }
        long total = TimeUnit.MILLISECONDS.toNanos(millis);
        long deadline = start + total + PHASE_SLACK.toNanos();
        String label = locked ? "with lock" : "without lock";
        try {
            awaitAll(phases.stream().map(phase -> phase.done).toList(), deadline,
                    "the workers to finish the " + label + " phase",
                    () -> progress.update(label, System.nanoTime() - start, total,
                            phases.stream().mapToLong(phase -> phase.progress).sum()));
        } finally {
            progress.finish();
        }

        long elapsed = 0;
        long increments = 0;
        long fencingViolations = 0;
        long leasesLost = 0;
        long[] perWorker = new long[phases.size()];
        List<Acquisition> acquisitions = new ArrayList<>();
        for (int i = 0; i < phases.size(); i++) {
            WorkerProcess.Summary summary = phases.get(i).done.join();
            elapsed = Math.max(elapsed, summary.elapsedMicros());
            increments += summary.increments();
            fencingViolations += summary.fencingViolations();
            leasesLost += summary.leasesLost();
            perWorker[i] = summary.increments();
            acquisitions.addAll(phases.get(i).acquisitions);
        }
        long counted = keyspace.countersTotal(workload.locks());
        return locked
                ? RunResult.locked(workload, elapsed, increments, counted, perWorker, acquisitions,
                        fencingViolations, leasesLost)
                : RunResult.unlocked(workload, elapsed, increments, counted, perWorker);
    }

    /**
     * Waits until every future is done, calling {@code tick} every {@value #TICK_MILLIS} ms meanwhile.
     * The first failure ends the wait at once: one dead worker ends the run, it does not wait for the
     * others.
     */
    private void awaitAll(List<? extends CompletableFuture<?>> futures, long deadline, String what, Runnable tick)
            throws InterruptedException {
        while (true) {
            CompletableFuture<?> pending = null;
            for (CompletableFuture<?> future : futures) {
                if (future.isCompletedExceptionally()) {
                    throw translated(future.handle((value, error) -> error).join());
                }
                if (pending == null && !future.isDone()) {
                    pending = future;
                }
            }
            if (pending == null) {
                return;
            }
            tick.run();
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new RelockException("gave up waiting for " + what);
            }
            try {
                pending.get(Math.min(left, TimeUnit.MILLISECONDS.toNanos(TICK_MILLIS)), TimeUnit.NANOSECONDS);
            } catch (TimeoutException | ExecutionException e) {
                // next round: a failure is rethrown from the loop's check
            }
        }
    }

    /** A worker's failure as the exception the CLI maps to an exit code: 69 if Redis was the trouble. */
    private RuntimeException translated(Throwable cause) {
        if (closed.get()) {
            // the shutdown hook killed the workers: their deaths are not the news
            return new RelockException("stopped by a signal; the workers were ended and the run's keys deleted");
        }
        if (cause instanceof WorkerProcess.WorkerFailure failure) {
            return failure.unavailable
                    ? new RedisUnavailableException(failure.getMessage(), failure)
                    : new RelockException(failure.getMessage(), failure);
        }
        return cause instanceof RuntimeException runtime ? runtime : new RelockException(cause.toString(), cause);
    }

    /** The last lines each worker wrote to stderr, for --verbose after a failure. */
    public List<String> workerLogs() {
        List<String> lines = new ArrayList<>();
        for (WorkerProcess worker : workers) {
            for (String line : worker.stderrTail()) {
                lines.add("worker " + (worker.index() + 1) + ": " + line);
            }
        }
        return lines;
    }

    /** Ends the workers and deletes every key of the run. Idempotent. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        try {
            workers.forEach(WorkerProcess::requestExit);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
            workers.forEach(worker -> worker.awaitExit(deadline));
            keyspace.deleteAll();
        } finally {
            keyspace.close();
            try {
                Runtime.getRuntime().removeShutdownHook(shutdownHook);
            } catch (IllegalStateException e) {
                // the JVM is shutting down; the hook is running or ran
            }
        }
    }

    /** The shutdown hook: kill the workers without asking, then delete the run's keys. */
    private void abort() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        workers.forEach(WorkerProcess::kill);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
        workers.forEach(worker -> worker.awaitExit(deadline)); // or a dying worker might write after the clean-up
        try {
            keyspace.deleteAll();
        } catch (RuntimeException e) {
            // Redis is gone (a private server stops in its own hook); the data keys expire on their own
        }
    }
}
