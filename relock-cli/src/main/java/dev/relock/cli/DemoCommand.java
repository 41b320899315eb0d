package dev.relock.cli;

import dev.relock.RedisUnavailableException;
import dev.relock.RelockClient;
import dev.relock.cli.demo.ContentionSession;
import dev.relock.cli.demo.RedisAddress;
import dev.relock.cli.demo.RedisTarget;
import dev.relock.cli.demo.RunResult;
import dev.relock.cli.demo.Workload;
import io.lettuce.core.RedisURI;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code relock demo}: worker processes increment counters in Redis with GET then SET, under the
 * lock and then without it, and a table shows what the lock costs and what it prevents.
 *
 * <p>Which Redis: {@code --redis} or {@code $RELOCK_REDIS} name one (the run's keys live under a unique prefix and
 * are deleted afterwards, nothing else is touched); otherwise a private redis-server is started and stopped
 * afterwards, even when a Redis answers at the default address: a demo never writes to a Redis nobody named.
 * {@code --embedded} says the same explicitly and excludes {@code --redis}.
 */
@Command(name = "demo", mixinStandardHelpOptions = true, sortOptions = false,
        description = {
            "Shows the lock at work: worker processes (separate JVMs) contend for a few locks and increment"
                    + " a counter in Redis with a plain GET then SET while holding one. A live progress bar,"
                    + " then a table: acquisitions, throughput, acquire wait, handoff latency, fairness,"
                    + " lost updates, fencing-order violations. Then the same run without the lock, to show"
                    + " the updates the lock saves.",
            "",
            "Redis: --redis or $RELOCK_REDIS name one; else a private redis-server is started, even if a Redis"
                    + " answers at " + ConnectionOptions.DEFAULT_URI + " ($RELOCK_REDIS_SERVER, else redis-server on the"
                    + " PATH, else, on Linux x86-64, the binary in the embedded-redis jar: from ~/.cache/relock/demo,"
                    + " the local Maven repository, or fetched once from Maven Central or $RELOCK_MAVEN_REPOSITORY and"
                    + " checked against its SHA-256) and stopped afterwards. Keys go under a prefix unique to the run"
                    + " and are deleted at the end.",
            ""},
        footerHeading = "%nExamples:%n",
        footer = {
            "  # 4 workers, 3 locks: 5 s with the lock, then 5 s without",
            "  relock demo",
            "",
            "  # everybody on one lock, for longer",
            "  relock demo --workers 8 --locks 1 --duration 10s",
            "",
            "  # on your own Redis (the run's keys are deleted afterwards)",
            "  relock demo --redis redis://redis.internal:6379",
            "",
            "Exit status: 0 the locked run lost nothing, as it should; 1 it did;",
            "64 usage error; 69 Redis unreachable."
        })
public final class DemoCommand implements Callable<Integer> {

    @Mixin
    ConnectionOptions connection;

    @Spec
    CommandSpec spec;

    @Option(names = "--embedded",
            description = "Start a private redis-server (what the demo does unless --redis or $RELOCK_REDIS names one).")
    boolean embedded;

    @Option(names = {"-w", "--workers"}, paramLabel = "N", defaultValue = "4",
            description = "Worker processes (separate JVMs) (default: ${DEFAULT-VALUE}).")
    int workers;

    @Option(names = "--threads", paramLabel = "N", defaultValue = "2",
            description = "Threads in each worker (default: ${DEFAULT-VALUE}).")
    int threads;

    @Option(names = "--locks", paramLabel = "N", defaultValue = "3",
            description = "Locks (and counters) the workers contend for (default: ${DEFAULT-VALUE}).")
    int locks;

    @Option(names = {"-d", "--duration"}, paramLabel = "DURATION", defaultValue = "5s",
            description = "How long each of the two runs lasts, e.g. 2s, 500ms, 1m (default: ${DEFAULT-VALUE}).")
    Duration duration;

    @Override
    public Integer call() throws InterruptedException {
        Logging.configure(connection.verbose);
        if (embedded && connection.redis != null) {
            throw new ParameterException(spec.commandLine(), "--embedded and --redis exclude each other");
        }
        Workload workload = workload();
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        try (RedisTarget target = target(err)) {
            List<RunResult> results = new ContentionSession(out, err, connection.verbose)
                    .run(target.uri(), target.description(), connection.prefix, "demo", workload, true, "worker process");
            RunResult locked = results.get(0);
            RunResult unlocked = results.get(1);
            out.println(verdict(locked, unlocked));
            out.flush();
            return locked.passed() ? ExitCodes.OK : ExitCodes.CHECK_FAILED;
        }
    }

    private Workload workload() {
        try {
            Workload.requireInRange(workers, Workload.MAX_WORKERS, "--workers");
            Workload.requireInRange(threads, Workload.MAX_THREADS, "--threads");
            Workload.requireInRange(locks, Workload.MAX_LOCKS, "--locks");
            Workload.requireDuration(duration, "--duration");
            RelockClient.builder().keyPrefix(connection.prefix); // the library's rules, checked before any JVM starts
            return new Workload(workers, threads, locks, duration);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage());
        }
    }

    /** The Redis to run on, as the class comment says. */
    private RedisTarget target(PrintWriter err) throws InterruptedException {
        if (!embedded && connection.uriGiven()) {
            try {
                RedisAddress.parse(connection.uri());
            } catch (IllegalArgumentException e) {
                throw new ParameterException(spec.commandLine(), e.getMessage());
            }
            return RedisTarget.existing(connection.uri(), connection.redis != null ? "from --redis" : "from $RELOCK_REDIS");
        }
        String why = embedded ? "--embedded was given" : "neither --redis nor $RELOCK_REDIS names a Redis";
        try {
            return RedisTarget.privateServer(why, err);
        } catch (RedisUnavailableException e) {
            RedisURI standard = RedisURI.create(ConnectionOptions.DEFAULT_URI);
            if (RedisTarget.probe(standard.getHost(), standard.getPort(), Duration.ofMillis(500))
                    != RedisTarget.Probe.ANSWERS) {
                throw e;
            }
            // the user may mean the Redis that answers there; the demo does not write to it unasked
            throw new RedisUnavailableException(e.getMessage() + "; a Redis answers at " + ConnectionOptions.DEFAULT_URI
                    + ": pass --redis " + ConnectionOptions.DEFAULT_URI + " to run the demo on it", e);
        }
    }

    private static String verdict(RunResult locked, RunResult unlocked) {
        if (!locked.passed()) {
            return String.format(Locale.ROOT, "UNEXPECTED: with the lock, %,d updates were lost and %,d fencing tokens"
                    + " came out of order. Please report this with the output above.",
                    locked.lostUpdates(), locked.fencingViolations());
        }
        String withLock = String.format(Locale.ROOT,
                "With the lock all %,d increments were kept and fencing tokens always rose; ", locked.increments());
        if (unlocked.lostUpdates() > 0) {
            return withLock + String.format(Locale.ROOT, "without it %,d of %,d were lost.",
                    unlocked.lostUpdates(), unlocked.increments());
        }
        return withLock + "without it none was lost this time: the race needs more contention"
                + " (try more --workers or --threads).";
    }
}
