package dev.relock.cli;

import dev.relock.RelockClient;
import dev.relock.cli.demo.ContentionSession;
import dev.relock.cli.demo.RedisAddress;
import dev.relock.cli.demo.RunResult;
import dev.relock.cli.demo.Workload;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code relock verify}: the demo's engine, locked run only, against the user's own Redis; exit 0
 * if no update was lost and fencing tokens always rose, else 1.
 */
@Command(name = "verify", mixinStandardHelpOptions = true, sortOptions = false,
        description = {
            "Checks a Redis deployment before you trust it with locks: client processes (separate JVMs)"
                    + " contend for a few locks and increment a counter with a plain GET then SET while holding"
                    + " one; afterwards no increment may be missing and every lock's fencing tokens must have"
                    + " risen. Prints the same table as 'relock demo'.",
            "",
            "The run's keys go under a prefix unique to it (below --prefix) and are deleted at the end;"
                    + " nothing else is touched. Run it against the deployment your applications use, e.g."
                    + " while you fail over a replica, to see whether locks survive it.",
            ""},
        footerHeading = "%nExamples:%n",
        footer = {
            "  relock verify --redis redis://redis.internal:6379",
            "",
            "  # TLS and a password; more clients, for longer",
            "  relock verify --redis rediss://app:secret@redis:6380 --clients 8 -d 1m",
            "",
            "  # in a script: go on only if locks hold on this deployment",
            "  RELOCK_REDIS=redis://10.0.0.5:6379 relock verify && ./deploy",
            "",
            "Exit status: 0 no update lost and no fencing-order violation; 1 otherwise;",
            "64 usage error; 69 Redis unreachable."
        })
public final class VerifyCommand implements Callable<Integer> {

    @Mixin
    ConnectionOptions connection;

    @Spec
    CommandSpec spec;

    @Option(names = {"-c", "--clients"}, paramLabel = "N", defaultValue = "4",
            description = "Client processes (separate JVMs) (default: ${DEFAULT-VALUE}).")
    int clients;

    @Option(names = "--threads", paramLabel = "N", defaultValue = "2",
            description = "Threads in each client (default: ${DEFAULT-VALUE}).")
    int threads;

    @Option(names = "--locks", paramLabel = "N", defaultValue = "3",
            description = "Locks (and counters) the clients contend for (default: ${DEFAULT-VALUE}).")
    int locks;

    @Option(names = {"-d", "--duration"}, paramLabel = "DURATION", defaultValue = "10s",
            description = "How long the run lasts, e.g. 30s, 5m (default: ${DEFAULT-VALUE}).")
    Duration duration;

    @Override
    public Integer call() throws InterruptedException {
        Logging.configure(connection.verbose);
        Workload workload;
        try {
            Workload.requireInRange(clients, Workload.MAX_WORKERS, "--clients");
            Workload.requireInRange(threads, Workload.MAX_THREADS, "--threads");
            Workload.requireInRange(locks, Workload.MAX_LOCKS, "--locks");
            Workload.requireDuration(duration, "--duration");
            workload = new Workload(clients, threads, locks, duration);
            RelockClient.builder().keyPrefix(connection.prefix); // the library's rules, checked before any JVM starts
            RedisAddress.parse(connection.uri());
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage());
        }
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        String uri = connection.uri();
        RunResult result = new ContentionSession(out, err, connection.verbose)
                .run(uri, RedisAddress.display(uri), connection.prefix, "verify", workload, false, "client process")
                .get(0);
        if (result.passed()) {
            out.println(String.format(Locale.ROOT, "PASS: no update lost and fencing tokens always rose in %,d"
                    + " acquisitions by %d client processes with %d threads each.", result.increments(),
                    workload.workers(), workload.threadsPerWorker()));
            out.flush();
            return ExitCodes.OK;
        }
        out.println(String.format(Locale.ROOT, "FAIL: %,d lost updates and %,d fencing-order violations in %,d"
                + " acquisitions: this Redis does not keep locks safe.", result.lostUpdates(),
                result.fencingViolations(), result.increments()));
        out.flush();
        return ExitCodes.CHECK_FAILED;
    }
}
