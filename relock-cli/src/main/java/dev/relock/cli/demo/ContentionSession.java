package dev.relock.cli.demo;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What {@code demo} and {@code verify} print around a run of the {@link ContentionEngine}: which
 * Redis and what workload, the live progress, the table. The verdict is each command's own.
 */
public final class ContentionSession {

    private final PrintWriter out;
    private final PrintWriter err;
    private final boolean verbose;

    public ContentionSession(PrintWriter out, PrintWriter err, boolean verbose) {
        this.out = out;
        this.err = err;
        this.verbose = verbose;
    }

    /**
     * Runs the locked phase and, with {@code alsoUnlocked}, the same without the lock; prints the
     * table on {@code out} and returns the results in that order.
     *
     * @param redisDescription which Redis, already without credentials
     * @param kind "demo" or "verify": part of the run's key prefix
     * @param workerNoun what a worker is called, "worker process" or "client process"
     */
    public List<RunResult> run(String uri, String redisDescription, String basePrefix, String kind,
            Workload workload, boolean alsoUnlocked, String workerNoun) throws InterruptedException {
        List<RunResult> results = new ArrayList<>();
        try (ContentionEngine engine = ContentionEngine.connect(uri, basePrefix, kind, workload, Progress.on(err))) {
            out.println("Redis: " + redisDescription);
            out.printf(Locale.ROOT, "%d %s with %d threads each increment %d counters with GET then SET, each"
                    + " under its lock, for %s%s;%nkeys under %s:* (deleted at the end)%n",
                    workload.workers(), workload.workers() == 1 ? workerNoun : workerNoun + "es",
                    workload.threadsPerWorker(), workload.locks(), seconds(workload),
                    alsoUnlocked ? ", then the same without the lock" : "", engine.keyPrefix());
            out.flush();
            try {
                engine.startWorkers();
                results.add(engine.run(true));
                if (alsoUnlocked) {
                    results.add(engine.run(false));
                }
            } catch (RuntimeException e) {
                if (verbose) {
                    engine.workerLogs().forEach(err::println);
                    err.flush();
                }
                throw e;
            }
        }
        out.println();
        out.print(ReportTable.render(results));
        out.println();
        out.flush();
        return results;
    }

    private static String seconds(Workload workload) {
        long millis = workload.duration().toMillis();
        return millis % 1000 == 0 ? millis / 1000 + " s" : millis + " ms";
    }
}
