package dev.relock.faults;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The fault campaign (issue 15): for each {@link Scenario}, three {@link FaultWorker} processes run its
 * {@link Workload} while the scenario's fault is injected on a seeded schedule; then the merged histories
 * are checked ({@link HistoryChecker}) and docs/RELIABILITY.md is written ({@link ReliabilityReport}).
 *
 * <p>Options: {@code --quick} ({@value #QUICK_SECONDS} s per scenario, the scenarios marked quick: what CI runs),
 * {@code --seconds N} per scenario (default
 * 120), {@code --seed S} (printed either way; replays the schedule of victims and intervals),
 * {@code --only TEXT} (scenarios whose name contains it; their rows replace theirs in the report, the other rows stay, each
 * with the commit it was measured at: {@link RowFile}), {@code --out FILE} (the report; default docs/RELIABILITY.md),
 * {@code --work DIR} (histories and worker logs; default a temporary directory).
 * Every server is the fixture's, on free loopback ports; every process killed or paused is one this
 * campaign started.
 */
public final class Campaign {

    static final int WORKERS = 3;
    static final Duration LEASE = Duration.ofMillis(1_500);
    static final Duration COMMAND_TIMEOUT = Duration.ofMillis(500);
    /** When the first fault of a scenario comes, after every worker has asked for the lock once. */
    static final Duration FIRST_FAULT = Duration.ofSeconds(1);
    /** How long the campaign waits for its workers to start (a JVM start and a connect, on a busy machine). */
    static final Duration WORKER_START = Duration.ofSeconds(30);
    /**
     * Seconds per scenario of {@code --quick}, what CI's smoke test runs: 4 s once left the Cluster failover scenario
     * no critical section on a slow machine.
     */
    static final long QUICK_SECONDS = 5;

    public static void main(String[] args) throws Exception {
        boolean failed = run(args).stream().anyMatch(row -> !row.passed());
        System.exit(failed ? 1 : 0); // a failed verdict fails run.sh
    }

    /** Runs the scenarios the options select, writes the report, and returns its rows. */
    static List<ReliabilityReport.Row> run(String... args) throws Exception {
        long seconds = 120;
        boolean quick = false;
        long seed = new Random().nextLong();
        String only = "";
        List<String> skipped = new ArrayList<>();
        Path out = Path.of("docs/RELIABILITY.md");
        Path work = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--quick" -> {
                    quick = true;
                    seconds = QUICK_SECONDS;
                }
                case "--seconds" -> seconds = Long.parseLong(args[++i]);
                case "--seed" -> seed = Long.parseLong(args[++i]);
                case "--only" -> only = args[++i];
                case "--skip" -> skipped.add(args[++i]);
                case "--out" -> out = Path.of(args[++i]);
                case "--work" -> work = Path.of(args[++i]);
                default -> throw new IllegalArgumentException("unknown option " + args[i]
                        + " (known: --quick, --seconds N, --seed S, --only TEXT, --skip TEXT, --out FILE, "
                        + "--work DIR)");
            }
        }
        if (work == null) {
            work = Files.createTempDirectory("relock-faults-");
        }
        String commit = commit();
        System.out.printf("fault campaign at %s: seed %d, %d s per scenario, histories in %s%n", commit, seed, seconds,
                work);
        List<ReliabilityReport.Row> rows = new ArrayList<>();
        // scenarios whose run failed (a fixture that could not inject its fault on a loaded machine: a failover that
        // did not complete in time): their rows keep what an earlier run measured, and the campaign fails at the end
        List<String> unmeasured = new ArrayList<>();
        for (Scenario<?> scenario : Scenario.all()) {
            if (!scenario.name().contains(only) || skipped.stream().anyMatch(scenario.name()::contains)
                    || (quick && !scenario.quick())) {
                continue;
            }
            Path dir = Files.createDirectories(work.resolve(scenario.name().replaceAll("[^A-Za-z0-9]+", "-")));
            // each scenario's schedule from the seed and its name alone, so that --only replays it as the full run had it
            Random schedule = new Random(seed ^ scenario.name().hashCode());
            Run run = new Run(scenario, dir, seconds * scenario.lengthFactor(), schedule);
            Findings findings;
            try {
                findings = run.execute();
            } catch (Exception e) {
                // the run's servers and workers are gone (execute's try-with-resources and finally)
                System.out.printf("%-40s not measured: %s%n", scenario.name(), e);
                e.printStackTrace(System.out);
                unmeasured.add(scenario.name());
                continue;
            }
            System.out.printf("%-40s %s%n", scenario.name(), findings.summary());
            rows.add(new ReliabilityReport.Row(scenario, run.servers.describe(), findings,
                    new ReliabilityReport.Measurement(commit, seed, seconds * scenario.lengthFactor())));
        }
        // a run of some scenarios keeps the other rows of the report, each with the commit it was measured at
        Path rowFile = RowFile.beside(out);
        List<ReliabilityReport.Row> reported = only.isEmpty() && skipped.isEmpty() && !quick && unmeasured.isEmpty()
                ? rows : RowFile.merge(RowFile.read(rowFile), rows);
        RowFile.write(rowFile, reported);
        ReliabilityReport.write(out, reported);
        System.out.println("wrote " + out + " (" + reported.size() + " rows, " + rows.size() + " measured now)");
        if (!unmeasured.isEmpty()) {
            throw new IllegalStateException(unmeasured.size() + " scenario(s) not measured, their rows left as they"
                    + " were: " + unmeasured);
        }
        return rows;
    }

    /**
     * The commit the campaign runs at, {@code git rev-parse --short HEAD}, with {@code +changes} when relock-core's or
     * the campaign's sources differ from it; "unknown" outside a git work tree.
     */
    static String commit() throws InterruptedException {
        try {
            String head = git("rev-parse", "--short=7", "HEAD").trim();
            String changes = git("status", "--porcelain", "--", "relock-core/src/main", "relock-faults/src/main");
            return head.isEmpty() ? "unknown" : head + (changes.isBlank() ? "" : "+changes");
        } catch (IOException e) {
            return "unknown";
        }
    }

    private static String git(String... arguments) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of("git"));
        command.addAll(List.of(arguments));
        Process git = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        String output = new String(git.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        return git.waitFor() == 0 ? output : "";
    }

    /**
     * One scenario's run: its lock servers, its resources, its workers, its history. Used by one thread, the
     * campaign's; the faults it offers act on workers, the servers' own faults are on {@link LockServers}.
     */
    static final class Run {

        private final Scenario<?> scenario;
        private final Path dir;
        private final long seconds;
        private final Random random;
        // copy-on-write: the shutdown hook reads it while a fault may replace a worker
        private final List<WorkerProcess> workers = new CopyOnWriteArrayList<>();
        private LockServers servers;
        private Resources resources;
        private HistoryWriter history;
        private long endNanos;
        private int started;

        Run(Scenario<?> scenario, Path dir, long seconds, Random random) {
            this.scenario = scenario;
            this.dir = dir;
            this.seconds = seconds;
            this.random = random;
        }

        Findings execute() throws Exception {
            return execute(scenario);
        }

        private <S extends LockServers> Findings execute(Scenario<S> scenario) throws Exception {
            // a campaign stopped early (Ctrl-C) takes its workers with it
            Thread killWorkers = new Thread(() -> workers.forEach(WorkerProcess::destroy));
            Runtime.getRuntime().addShutdownHook(killWorkers);
            Path campaignHistory = dir.resolve("campaign.history");
            Path coordinatorHistory = dir.resolve("coordinator.history");
            try (S lockServers = scenario.servers().get();
                    Resources resources = Resources.start(dir.getFileName().toString());
                    HistoryWriter out = new HistoryWriter(campaignHistory, HistoryEvent.CAMPAIGN);
                    HistoryWriter coordinatorOut = new HistoryWriter(coordinatorHistory, "coordinator")) {
                this.servers = lockServers;
                this.resources = resources;
                history = out;
                for (int i = 0; i < WORKERS; i++) {
                    startWorker(seconds);
                }
                awaitWorkersStarted();
                // counted from here, as each worker counts its seconds from its own start: on a loaded machine
                // worker JVMs took 4 s to come up, which left a 6 s quick run no time for its fault
                endNanos = System.nanoTime() + Duration.ofSeconds(seconds).toNanos();
                try (LatchCoordinator coordinator = scenario.workload() == Workload.LATCH
                        ? LatchCoordinator.start(coordinatorClient(), resources, coordinatorOut, WORKERS) : null) {
                    injectUntilTheEnd(scenario, lockServers);
                    for (WorkerProcess worker : workers) {
                        if (!worker.awaitEnd(Duration.ofSeconds(60))) {
                            log(EventKind.KILLED, worker.id); // did not end by itself
                        }
                    }
                }
                log(EventKind.COUNTER_FINAL, Long.toString(resources.counter()));
                resources.drainQueue().forEach(item -> log(EventKind.DRAINED, item));
            } finally {
                for (WorkerProcess worker : workers) {
                    if (worker.isAlive()) {
                        worker.kill();
                    }
                }
                Runtime.getRuntime().removeShutdownHook(killWorkers);
            }
            List<Path> files = new ArrayList<>();
            workers.forEach(worker -> files.add(worker.history));
            files.add(campaignHistory);
            files.add(coordinatorHistory);
            return HistoryChecker.check(HistoryChecker.read(files.toArray(Path[]::new)));
        }

        /**
         * Returns once every worker has logged STARTED (connected, its seconds running), or after
         * {@link #WORKER_START}: a fault before that would hit servers nobody uses yet. Reads the histories every
         * 50 ms; nothing else tells this JVM that a worker is up.
         */
        private void awaitWorkersStarted() throws IOException, InterruptedException {
            long until = System.nanoTime() + WORKER_START.toNanos();
            while (System.nanoTime() - until < 0) {
                boolean allStarted = true;
                for (WorkerProcess worker : workers) {
                    allStarted &= !worker.isAlive() || worker.hasStarted();
                }
                if (allStarted) {
                    return;
                }
                Thread.sleep(50);
            }
        }

        private <S extends LockServers> void injectUntilTheEnd(Scenario<S> scenario, S lockServers)
                throws Exception {
            long stopInjecting = endNanos - Duration.ofSeconds(2).toNanos();
            boolean first = true;
            while (System.nanoTime() < stopInjecting) {
                if (scenario.periodMillis() == 0) {
                    Thread.sleep(Duration.ofNanos(stopInjecting - System.nanoTime()).toMillis() + 1);
                    break;
                }
                // the schedule, not a synchronisation: the first fault a second after the workers are up, then
                // every 0.5 to 1.5 periods
                Thread.sleep(first ? FIRST_FAULT.toMillis()
                        : (long) (scenario.periodMillis() * (0.5 + random.nextDouble())));
                first = false;
                if (System.nanoTime() >= stopInjecting) {
                    break;
                }
                log(EventKind.FAULT_START, scenario.name());
                String what = scenario.fault().inject(lockServers, this);
                log(EventKind.FAULT_END, scenario.name() + (what.isEmpty() ? "" : ": " + what));
            }
        }

        private void startWorker(long runSeconds) throws IOException {
            String id = "w" + (++started);
            workers.add(WorkerProcess.start(id, dir, List.of(
                    "--workload", scenario.workload().name(),
                    "--lock", servers.lockSpec(id),
                    "--guard", servers.guard(),
                    "--resource", resources.redisUri(),
                    "--sql", resources.jdbcUrl(),
                    "--seconds", Long.toString(runSeconds),
                    "--lease", Long.toString(LEASE.toMillis()),
                    "--timeout", Long.toString(COMMAND_TIMEOUT.toMillis()))));
        }

        /**
         * The latch coordinator's client: on the lock servers as the workers reach them, but past any proxy a fault
         * aims at a worker ({@link LockServers#coordinatorSpec()}).
         */
        private dev.relock.RelockClient coordinatorClient() {
            return FaultWorker.clientFor(servers.coordinatorSpec(), servers.guard()).defaultLease(LEASE)
                    .commandTimeout(COMMAND_TIMEOUT).build();
        }

        /** The seeded random of this run, for the faults' choices. */
        Random random() {
            return random;
        }

        /** Seconds left until the workers stop. */
        long secondsLeft() {
            return Duration.ofNanos(endNanos - System.nanoTime()).toSeconds();
        }

        private WorkerProcess aLiveWorker() {
            List<WorkerProcess> alive = workers.stream().filter(WorkerProcess::isAlive).toList();
            return alive.isEmpty() ? null : alive.get(random.nextInt(alive.size()));
        }

        /** A live worker whose history says it is in its section, else any live worker, else null. */
        WorkerProcess holderOrAnyWorker() {
            for (WorkerProcess worker : workers) {
                try {
                    if (worker.isAlive() && worker.inSection()) {
                        return worker;
                    }
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
            return aLiveWorker();
        }

        String killAWorker() throws Exception {
            WorkerProcess victim = aLiveWorker();
            if (victim == null) {
                return "";
            }
            victim.kill();
            log(EventKind.KILLED, victim.id);
            long left = secondsLeft();
            if (left >= 2) {
                startWorker(left);
            }
            return "killed " + victim.id;
        }

        /**
         * SIGSTOPs a worker caught in its section, for longer than the lease. Caught means: its history
         * still ends inside a section once it is frozen (a worker frozen just after it left is let go
         * at once, a few ms of pause, and the next is tried), for up to two seconds.
         */
        String pauseTheHolderPastTheLease() throws Exception {
            long lookUntil = System.nanoTime() + Duration.ofSeconds(2).toNanos();
            while (System.nanoTime() < lookUntil) {
                for (WorkerProcess worker : workers) {
                    if (!worker.isAlive() || !worker.inSection()) {
                        continue;
                    }
                    worker.pause();
                    if (!worker.inSection()) {
                        worker.resume();
                        continue;
                    }
                    try {
                        Thread.sleep(LEASE.toMillis() + 500); // the fault: frozen longer than its lease
                    } finally {
                        worker.resume();
                    }
                    return "paused " + worker.id;
                }
            }
            return "no holder caught";
        }

        private void log(EventKind kind, String detail) {
            history.append(kind, 0, detail);
        }
    }
}
