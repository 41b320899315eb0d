package dev.relock.bench;

import dev.relock.testredis.RedisNodes;
import dev.relock.testredis.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.function.Function;
import java.util.function.Predicate;
import org.springframework.integration.redis.util.RedisLockRegistry.RedisLockType;

/**
 * Runs the scenarios against one private server and keeps their results. Within S1, S2 and S3 the
 * subjects take turns run by run (warm-up each, then repeat 1 of every subject, repeat 2 of every
 * subject, ...), so a burst of load from elsewhere hurts all of them alike instead of one; S1 then pairs relock with
 * its fastest peer in short turns ({@link #pairedTurns}). S3p and S5 give each subject clients of its own and run one
 * subject at a time, but relock, its scripts on bare Lettuce and the Redisson locks its targets are measured against in
 * turns ({@link #ownClients}).
 */
final class Bench {

    /** A warm-up of S3p or S5 ({@link #warmUp}) runs until this many acquisitions, or for {@link #MAX_WARM_UP}. */
    static final long WARM_UP_ACQUISITIONS = 20_000;
    static final Duration MAX_WARM_UP = Duration.ofSeconds(15);
    /**
     * Runs of each subject in S3p, S5 and their Redlock runs (but for --quick): the rounds of relock and the Redisson
     * locks its targets name spread ±15 % on this machine, so three were too few for a median a target can stand on.
     */
    static final int CONTENDED_REPEATS = 5;

    final BenchConfig config;
    /** The one private server; null on a Bench over Redlock's nodes ({@link #overNodes}). */
    final RedisServer server;
    final ServerStats stats;
    final List<Subject> subjects;
    final List<Results.Scenario> scenarios = new ArrayList<>();
    final List<Results.Held> held = new ArrayList<>();
    /** What every subject connects to: one URI, or Redlock's URIs joined by commas. */
    private final String uri;
    private final Runnable flushAll;

    Bench(BenchConfig config, RedisServer server, List<Subject> subjects) {
        this(config, server, server.uri(), server::flushAll, new ServerStats(server), subjects);
    }

    private Bench(BenchConfig config, RedisServer server, String uri, Runnable flushAll, ServerStats stats,
            List<Subject> subjects) {
        this.config = config;
        this.server = server;
        this.uri = uri;
        this.flushAll = flushAll;
        this.stats = stats;
        this.subjects = subjects;
    }

    /**
     * A Bench whose subjects connect to all of {@code nodes} at once (Redlock): they get the URIs
     * comma-separated, each scenario flushes every node, and Redis CPU is the nodes' sum. S4 does
     * not run on it.
     */
    static Bench overNodes(BenchConfig config, RedisNodes nodes, List<Subject> subjects) {
        return new Bench(config, null, String.join(",", nodes.uris()), nodes::flushAll,
                new ServerStats(nodes.nodes()), subjects);
    }

    /**
     * relock, the floor, relock's scripts on bare Lettuce, Redisson 3 and 4 (three locks each), Spring Integration 7.0
     * and 6.5 (two modes each).
     */
    static List<Subject> allSubjects(RedissonLine redisson3, RedissonLine redisson4, SpringLine spring6) {
        List<Subject> all = new ArrayList<>();
        all.add(RelockSubject.standalone(Environment.relockVersion()));
        for (RedissonLine line : new RedissonLine[] {redisson3, redisson4}) {
            for (RedissonSubject.Kind kind : RedissonSubject.Kind.ONE_SERVER) {
                all.add(new RedissonSubject(line, kind));
            }
        }
        all.add(SpringSubject.onClassPath(RedisLockType.SPIN_LOCK));
        all.add(SpringSubject.onClassPath(RedisLockType.PUB_SUB_LOCK));
        all.add(SpringSubject.of(spring6, RedisLockType.SPIN_LOCK));
        all.add(SpringSubject.of(spring6, RedisLockType.PUB_SUB_LOCK));
        all.add(new FloorSubject(Environment.versionOf(io.lettuce.core.RedisClient.class)));
        all.add(new RelockScriptsSubject());
        return all;
    }

    /**
     * relock's and Redisson's (3 and 4) Redlock over independent servers, and relock's Redlock scripts on bare
     * Lettuce: S5's second half.
     */
    static List<Subject> redlockSubjects(RedissonLine redisson3, RedissonLine redisson4) {
        return List.of(RelockSubject.redlock(Environment.relockVersion()),
                new RedissonSubject(redisson3, RedissonSubject.Kind.REDLOCK),
                new RedissonSubject(redisson4, RedissonSubject.Kind.REDLOCK), new RedlockScriptsSubject());
    }

    String uri() {
        return uri;
    }

    /** Connects one client per subject for S1–S3; a subject that cannot connect is noted in each scenario. */
    Map<Subject, Object> connectAll(Predicate<Subject> which) {
        Map<Subject, Object> clients = new LinkedHashMap<>();
        for (Subject subject : subjects) {
            if (!which.test(subject)) {
                continue;
            }
            try {
                clients.put(subject, subject.connect(uri(), null));
            } catch (Exception | LinkageError e) {
                clients.put(subject, describe(e));
                Progress.say("  %s: cannot connect: %s", subject.label(), describe(e));
            }
        }
        return clients;
    }

    static void closeAll(Map<Subject, Object> clients) {
        List<Subject.Client> open = new ArrayList<>();
        for (Object client : clients.values()) {
            if (client instanceof Subject.Client c) {
                open.add(c);
            }
        }
        closeInParallel(open);
    }

    /** S1 and S2: {@code threads} threads, each on its own lock name, in one client. */
    Results.Scenario pairs(String id, String title, int threads, Map<Subject, Object> clients) throws InterruptedException {
        Results.Scenario scenario = new Results.Scenario(id, title);
        flushAll.run();
        Map<Results.SubjectRuns, List<Lock>> locks = new LinkedHashMap<>();
        for (Map.Entry<Subject, Object> entry : clients.entrySet()) {
            Results.SubjectRuns runs = new Results.SubjectRuns(entry.getKey());
            scenario.subjects.add(runs);
            if (!(entry.getValue() instanceof Subject.Client client)) {
                runs.error = "cannot connect: " + entry.getValue();
                continue;
            }
            List<Lock> mine = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                mine.add(client.lock(id + ":" + t));
            }
            locks.put(runs, mine);
        }
        measure(scenario, locks, (runs, mine) -> Loops.pairs(mine, config.measure(), stats),
                (runs, mine) -> Loops.pairs(mine, config.warmUp(), stats));
        scenarios.add(scenario);
        return scenario;
    }

    /**
     * A subject the targets measure relock against in S1 and S2: a Redisson RLock (3.x or 4.x) or a Spring
     * RedisLockRegistry (any line, either mode).
     */
    static boolean peer(Results.SubjectRuns runs) {
        return runs.family.startsWith("redisson") && runs.label.endsWith(" RLock") || runs.family.equals("spring");
    }

    /**
     * S1's paired turns, after its runs: relock and the {@link #peer} with the most pairs/s in them take
     * {@link BenchConfig#pairedTurns} turns of {@link BenchConfig#pairedTurn} each, one thread on the same lock as in
     * the runs, relock first in even turns and the peer first in odd ones (a drift within a turn favours neither),
     * after one unrecorded turn. A ratio of S1's medians compares runs seconds apart, on a machine whose speed drifts
     * between them; a turn's ratio compares two rates measured back to back.
     */
    Results.PairedTurns pairedTurns(Results.Scenario scenario, Map<Subject, Object> clients) {
        Results.SubjectRuns relock = scenario.subjects.stream().filter(s -> s.family.equals("relock") && s.ok())
                .findFirst().orElse(null);
        Results.SubjectRuns peer = scenario.subjects.stream().filter(s -> s.ok() && peer(s))
                .max(java.util.Comparator.comparingDouble(Results.SubjectRuns::median)).orElse(null);
        if (relock == null || peer == null) {
            return null;
        }
        Results.PairedTurns turns = new Results.PairedTurns(peer.label, config.pairedTurn().toNanos() / 1e9);
        scenario.paired = turns;
        try {
            Lock relockLock = clientOf(clients, relock.label).lock(scenario.id + ":0");
            Lock peerLock = clientOf(clients, peer.label).lock(scenario.id + ":0");
            for (int turn = -1; turn < config.pairedTurns(); turn++) {
                boolean relockFirst = turn % 2 == 0;
                Lock firstLock = relockFirst ? relockLock : peerLock;
                Lock secondLock = relockFirst ? peerLock : relockLock;
                Results.Run first = Loops.pairs(List.of(firstLock), config.pairedTurn(), stats);
                Results.Run second = Loops.pairs(List.of(secondLock), config.pairedTurn(), stats);
                if (turn >= 0) {
                    turns.add(relockFirst ? first : second, relockFirst ? second : first);
                }
            }
            Progress.say("  %s paired turns, relock and %s: relock ÷ it %.2f× (median of %d turns, %.2f–%.2f)",
                    scenario.id, peer.label, turns.medianRatio(), turns.ratios.size(), Stats.min(turns.ratios),
                    Stats.max(turns.ratios));
        } catch (Exception | LinkageError e) {
            turns.error = describe(e);
            Progress.say("  %s paired turns failed: %s", scenario.id, turns.error);
        }
        return turns;
    }

    private static Subject.Client clientOf(Map<Subject, Object> clients, String label) {
        for (Map.Entry<Subject, Object> entry : clients.entrySet()) {
            if (entry.getKey().label().equals(label) && entry.getValue() instanceof Subject.Client client) {
                return client;
            }
        }
        throw new IllegalStateException("no connected client of " + label);
    }

    /** S3: eight threads of one client on one name. */
    Results.Scenario contentionOneClient(Map<Subject, Object> clients) throws InterruptedException {
        Results.Scenario scenario = new Results.Scenario("S3", "8 threads of one client on one lock");
        flushAll.run();
        Map<Results.SubjectRuns, List<Lock>> locks = new LinkedHashMap<>();
        for (Map.Entry<Subject, Object> entry : clients.entrySet()) {
            if (!entry.getKey().waits()) {
                continue;
            }
            Results.SubjectRuns runs = new Results.SubjectRuns(entry.getKey());
            scenario.subjects.add(runs);
            if (!(entry.getValue() instanceof Subject.Client client)) {
                runs.error = "cannot connect: " + entry.getValue();
                continue;
            }
            List<Lock> mine = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                mine.add(client.lock("s3:one"));
            }
            locks.put(runs, mine);
        }
        measure(scenario, locks, (runs, mine) -> Loops.contention(mine, config.measure(), stats),
                (runs, mine) -> Loops.contention(mine, config.warmUp(), stats));
        scenarios.add(scenario);
        return scenario;
    }

    /**
     * The warm-up of a scenario whose clients are its own (S3p, S5, their Redlock runs): rounds of the configured
     * warm-up until {@link #WARM_UP_ACQUISITIONS} acquisitions, at most {@link #MAX_WARM_UP}, so that the JIT has
     * compiled each subject's contended path before it is measured (at a few hundred acquisitions a second, one
     * second of warm-up runs it too seldom for that). The same for every subject.
     */
    private void warmUp(Callable<Results.Run> round) throws Exception {
        long until = System.nanoTime() + MAX_WARM_UP.toNanos();
        long acquisitions = 0;
        do {
            acquisitions += round.call().ops;
        } while (!config.quick() && acquisitions < WARM_UP_ACQUISITIONS && System.nanoTime() - until < 0);
    }

    /** S3p: eight clients, one thread each, on one name; each subject with clients of its own ({@link #ownClients}). */
    Results.Scenario contentionEightClients(String id, String titlePrefix, int clientsPerSubject)
            throws InterruptedException {
        Results.Scenario scenario = new Results.Scenario(id, titlePrefix + clientsPerSubject
                + " clients (one thread each, as separate processes would be) on one lock");
        ownClients(scenario, clientsPerSubject, subject -> subject.waits() ? subject.label() : null,
                new Contended<Lock>() {
                    @Override
                    public Lock lockOf(Subject.Client client) {
                        return client.lock("s3p:one");
                    }

                    @Override
                    public Results.Run run(List<Lock> locks, Duration duration) throws Exception {
                        return Loops.contention(locks, duration, stats);
                    }

                    @Override
                    public String describe(Results.Run run) {
                        return String.format("%,.0f acq/s, handoff p50 %.0f µs, fairness %.2f", run.opsPerSecond(),
                                run.handoff.getValueAtPercentile(50) / 1e3, run.fairness());
                    }
                });
        scenarios.add(scenario);
        return scenario;
    }

    /** S5: eight clients, one thread each, on one read-write lock, 90 % reads. */
    Results.Scenario readWrite(int clientsPerSubject) throws InterruptedException {
        Results.Scenario scenario = new Results.Scenario("S5",
                "read-write lock, " + clientsPerSubject + " clients (one thread each), 90 % reads");
        ownClients(scenario, clientsPerSubject, Subject::readWriteLabel, new Contended<ReadWriteLock>() {
            @Override
            public ReadWriteLock lockOf(Subject.Client client) {
                return client.readWriteLock("s5:one");
            }

            @Override
            public Results.Run run(List<ReadWriteLock> locks, Duration duration) throws Exception {
                return Loops.readWrite(locks, duration, stats);
            }

            @Override
            public String describe(Results.Run run) {
                return String.format("%,.0f acq/s (%.0f %% writes), p50 %.0f µs, fairness %.2f", run.opsPerSecond(),
                        100.0 * run.writes / Math.max(1, run.ops), run.latency.getValueAtPercentile(50) / 1e3,
                        run.fairness());
            }
        });
        scenarios.add(scenario);
        return scenario;
    }

    /** What S3p and S5 do with the locks of a subject's clients. */
    private interface Contended<L> {
        L lockOf(Subject.Client client);

        Results.Run run(List<L> locks, Duration duration) throws Exception;

        String describe(Results.Run run);
    }

    /**
     * Runs a scenario whose every subject (those {@code label} names) has {@code clientsPerSubject} clients of its
     * own, one subject at a time, except that relock, its own scripts on bare Lettuce (the floor of its protocol) and
     * the Redisson locks its targets are measured against ({@link #targetAnchor}) are connected together and take
     * turns run by run: the ratios between them are not the machine's drift over the minutes between them (S5's
     * Redisson ran 40-65 % faster in one run than in the next, minutes from relock's runs in both).
     */
    private <L> void ownClients(Results.Scenario scenario, int clientsPerSubject, Function<Subject, String> label,
            Contended<L> contended) {
        List<Subject> taking = subjects.stream().filter(subject -> label.apply(subject) != null).toList();
        List<Subject> together = taking.stream().filter(subject -> subject.family().equals("relock")
                || subject.family().equals("diagnostic") || targetAnchor(subject.family(), label.apply(subject)))
                .toList();
        boolean togetherRun = false;
        for (Subject subject : taking) {
            if (!together.contains(subject)) {
                inTurns(scenario, List.of(subject), clientsPerSubject, label, contended);
            } else if (!togetherRun) {
                togetherRun = true;
                inTurns(scenario, together, clientsPerSubject, label, contended);
            }
        }
    }

    /**
     * Whether a subject of {@code family}, labelled {@code label} in a scenario of {@link #ownClients}, is a lock
     * relock's targets there are measured against (the Report's S3p, S5 and Redlock S3p targets pick theirs by this): a
     * Redisson RLock, RReadWriteLock or RedissonRedLock of either line.
     */
    static boolean targetAnchor(String family, String label) {
        return family.startsWith("redisson") && (label.endsWith(" RLock")
                || label.endsWith(" RReadWriteLock") || label.endsWith(" RedissonRedLock"));
    }

    /** The subjects of {@code group}, each with clients of its own, warmed up one after the other, then in turns. */
    private <L> void inTurns(Results.Scenario scenario, List<Subject> group, int clientsPerSubject,
            Function<Subject, String> label, Contended<L> contended) {
        flushAll.run();
        List<Results.SubjectRuns> runs = new ArrayList<>();
        List<List<L>> locks = new ArrayList<>();
        List<Subject.Client> clients = new ArrayList<>();
        try {
            for (Subject subject : group) {
                Results.SubjectRuns each = new Results.SubjectRuns(subject, label.apply(subject));
                scenario.subjects.add(each);
                try {
                    List<Subject.Client> own = connectInParallel(subject, clientsPerSubject);
                    clients.addAll(own);
                    List<L> mine = new ArrayList<>();
                    for (Subject.Client client : own) {
                        mine.add(contended.lockOf(client));
                    }
                    Progress.say("  %s: warm-up", each.label);
                    warmUp(() -> contended.run(mine, config.warmUp()));
                    runs.add(each);
                    locks.add(mine);
                } catch (Exception | LinkageError e) {
                    each.error = describe(e);
                    Progress.say("  %s: failed: %s", each.label, each.error);
                }
            }
            int repeats = config.quick() ? config.repeats() : Math.max(config.repeats(), CONTENDED_REPEATS);
            for (int r = 0; r < repeats; r++) {
                for (int s = 0; s < runs.size(); s++) {
                    Results.SubjectRuns each = runs.get(s);
                    if (each.error != null) {
                        continue;
                    }
                    try {
                        Results.Run run = contended.run(locks.get(s), config.measure());
                        each.runs.add(run);
                        Progress.say("  %s: %s%s", each.label, contended.describe(run),
                                run.exclusive() ? "" : "  MUTUAL EXCLUSION VIOLATED");
                    } catch (Exception | LinkageError e) {
                        each.error = describe(e);
                        Progress.say("  %s: failed: %s", each.label, each.error);
                    }
                }
            }
        } finally {
            closeInParallel(clients);
        }
    }

    /** Connects {@code count} clients at once (Redisson takes a while per client to fill its pool). */
    private List<Subject.Client> connectInParallel(Subject subject, int count) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(count);
        try {
            List<Future<Subject.Client>> futures = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                futures.add(pool.submit(() -> subject.connect(uri(), null)));
            }
            List<Subject.Client> clients = new ArrayList<>();
            Exception failure = null;
            for (Future<Subject.Client> future : futures) {
                try {
                    clients.add(future.get(2, TimeUnit.MINUTES));
                } catch (ExecutionException e) {
                    failure = e.getCause() instanceof Exception cause ? cause : e;
                }
            }
            if (failure != null) {
                closeInParallel(clients);
                throw failure;
            }
            return clients;
        } finally {
            pool.shutdown();
        }
    }

    /** Closes clients at once (Redisson's shutdown waits a 2-second quiet period per client). */
    static void closeInParallel(List<Subject.Client> clients) {
        List<Thread> closers = new ArrayList<>();
        for (Subject.Client client : clients) {
            closers.add(Loops.started("bench-close", () -> {
                try {
                    client.close();
                } catch (RuntimeException e) {
                    Progress.say("  closing a client failed: %s", describe(e));
                }
            }));
        }
        for (Thread closer : closers) {
            try {
                closer.join(TimeUnit.SECONDS.toMillis(30));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** S4: each renewing subject holds {@code count} locks at once. */
    void heldLocks(int count, Predicate<Subject> which) {
        for (Subject subject : subjects) {
            if (!subject.renews() || !which.test(subject)) {
                continue;
            }
            Results.Held result;
            try {
                result = HeldLocks.run(subject, uri(), Objects.requireNonNull(server, "S4 needs one server"), count, config.heldLease(), config.heldWindow());
                Progress.say("  %s, %,d locks: %.0f B/lock, %+d threads (client %d), lock all %.2f s, "
                                + "unlock all %.2f s, %,.0f cmds/s, %,.0f round trips/s, %d lost",
                        subject.label(), count, result.heapBytesPerLock, result.threadsAddedByHolding,
                        result.threadsOfClient, result.lockAllSeconds, result.unlockAllSeconds,
                        result.commandsPerSecond, result.roundTripsPerSecond, result.unlockFailures);
                Progress.say("    window: %s", result.windowCommands);
                if (result.firstUnlockFailure != null) {
                    Progress.say("    first failed unlock: %s", result.firstUnlockFailure);
                }
            } catch (Exception | LinkageError e) {
                result = new Results.Held();
                result.label = subject.label();
                result.family = subject.family();
                result.locks = count;
                result.error = describe(e);
                Progress.say("  %s, %,d locks: failed: %s", subject.label(), count, result.error);
            }
            held.add(result);
        }
    }

    private interface Body {
        Results.Run run(Results.SubjectRuns runs, List<Lock> locks) throws Exception;
    }

    private void measure(Results.Scenario scenario, Map<Results.SubjectRuns, List<Lock>> locks, Body measured,
            Body warmUp) {
        for (Map.Entry<Results.SubjectRuns, List<Lock>> entry : locks.entrySet()) {
            try {
                warmUp.run(entry.getKey(), entry.getValue());
            } catch (Exception | LinkageError e) {
                entry.getKey().error = describe(e);
                Progress.say("  %s: warm-up failed: %s", entry.getKey().label, entry.getKey().error);
            }
        }
        for (int r = 0; r < config.repeats(); r++) {
            for (Map.Entry<Results.SubjectRuns, List<Lock>> entry : locks.entrySet()) {
                Results.SubjectRuns runs = entry.getKey();
                if (runs.error != null) {
                    continue;
                }
                try {
                    Results.Run run = measured.run(runs, entry.getValue());
                    runs.runs.add(run);
                    if (run.latency != null) {
                        Progress.say("  %s %s: %,.0f pairs/s, p50 %.0f µs, p99 %.0f µs", scenario.id, runs.label,
                                run.opsPerSecond(), run.latency.getValueAtPercentile(50) / 1e3,
                                run.latency.getValueAtPercentile(99) / 1e3);
                    } else {
                        Progress.say("  %s %s: %,.0f acq/s, handoff p50 %.0f µs, fairness %.2f, self %.0f%%%s",
                                scenario.id, runs.label, run.opsPerSecond(),
                                run.handoff.getValueAtPercentile(50) / 1e3, run.fairness(), 100 * run.selfShare(),
                                run.exclusive() ? "" : "  MUTUAL EXCLUSION VIOLATED");
                    }
                } catch (Exception | LinkageError e) {
                    runs.error = describe(e);
                    Progress.say("  %s %s: failed: %s", scenario.id, runs.label, runs.error);
                }
            }
        }
    }

    static String describe(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String text = e.getClass().getSimpleName() + ": " + e.getMessage();
        if (root != e) {
            text += " (cause " + root.getClass().getSimpleName() + ": " + root.getMessage() + ")";
        }
        return text.length() > 400 ? text.substring(0, 400) + "…" : text;
    }

    static Duration seconds(double s) {
        return Duration.ofMillis((long) (s * 1000));
    }
}
