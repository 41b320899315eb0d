package dev.relock.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.relock.testredis.RedisNodes;
import dev.relock.testredis.RedisServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReadWriteLock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.integration.redis.util.RedisLockRegistry.RedisLockType;

/**
 * What CI runs of the benchmarks: every subject starts, takes and gives up locks, and keeps mutual
 * exclusion under contention within a client and across clients (and so do the read-write locks,
 * and the Redlock subjects over five servers); S4's bookkeeping and the report writer work. No figure is asserted: a timing assertion on a shared 2-core machine would only
 * measure the neighbours.
 */
@Tag("redis")
class SmokeTest {

    private static RedisServer server;
    private static RedissonLine redisson3;
    private static RedissonLine redisson4;
    private static SpringLine spring6;
    private static List<Subject> subjects;

    @BeforeAll
    static void startServer() {
        server = RedisServer.start();
        redisson3 = RedissonLine.load(Path.of(System.getProperty("relock.bench.redisson3")));
        redisson4 = RedissonLine.load(Path.of(System.getProperty("relock.bench.redisson4")));
        spring6 = SpringLine.load(Path.of(System.getProperty("relock.bench.springIntegration6")));
        subjects = Bench.allSubjects(redisson3, redisson4, spring6);
    }

    @AfterAll
    static void stopServer() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void measuresEverySubjectStartingBothRedissonLinesAndBothSpringLines() {
        assertThat(subjects).extracting(Subject::label).anyMatch(l -> l.startsWith("relock "))
                .anyMatch(l -> l.matches("Redisson 3\\.\\d+\\.\\d+ RLock"))
                .anyMatch(l -> l.matches("Redisson 4\\.\\d+\\.\\d+ RFencedLock"))
                .anyMatch(l -> l.matches("Spring RedisLockRegistry 7\\.\\d+\\.\\d+ SPIN"))
                .anyMatch(l -> l.matches("Spring RedisLockRegistry 7\\.\\d+\\.\\d+ PUB_SUB"))
                .anyMatch(l -> l.matches("Spring RedisLockRegistry 6\\.5\\.\\d+ SPIN"))
                .anyMatch(l -> l.matches("Spring RedisLockRegistry 6\\.5\\.\\d+ PUB_SUB"))
                .anyMatch(l -> l.startsWith("floor"));
    }

    @Test
    void everySubjectLocksAndKeepsMutualExclusionWithinAndAcrossClients() throws Exception {
        ServerStats stats = new ServerStats(server);
        List<String> failures = new ArrayList<>();
        for (Subject subject : subjects) {
            server.flushAll();
            try (Subject.Client first = subject.connect(server.uri(), null);
                    Subject.Client second = subject.connect(server.uri(), null)) {
                pairsAndContention(subject, first, second, "smoke:pairs", "smoke:one", Duration.ofMillis(400), stats,
                        failures);
                if (subject.readWriteLabel() != null) {
                    List<ReadWriteLock> readWrite = List.of(first.readWriteLock("smoke:rw"),
                            first.readWriteLock("smoke:rw"), second.readWriteLock("smoke:rw"),
                            second.readWriteLock("smoke:rw"));
                    Results.Run mixed = Loops.readWrite(readWrite, Duration.ofMillis(400), stats);
                    if (mixed.ops == 0 || !mixed.exclusive()) {
                        failures.add(subject.readWriteLabel() + ": " + mixed.ops + " acquisitions, "
                                + mixed.overlaps + " overlaps, counter " + mixed.counter + " after "
                                + mixed.writes + " writes");
                    }
                }
            } catch (Exception | LinkageError e) {
                failures.add(subject.label() + ": " + Bench.describe(e));
            }
        }
        assertThat(failures).isEmpty();
    }

    @Test
    void redlockSubjectsLockAndKeepMutualExclusionAcrossClientsOverFiveServers() throws Exception {
        List<Subject> redlock = Bench.redlockSubjects(redisson3, redisson4);
        assertThat(redlock).extracting(Subject::label).anyMatch(l -> l.matches("relock .+ Redlock"))
                .anyMatch(l -> l.matches("Redisson 3\\.\\d+\\.\\d+ RedissonRedLock"))
                .anyMatch(l -> l.matches("Redisson 4\\.\\d+\\.\\d+ RedissonRedLock"));
        List<String> failures = new ArrayList<>();
        try (RedisNodes nodes = RedisNodes.builder(5).start()) {
            ServerStats stats = new ServerStats(nodes.nodes());
            String uris = String.join(",", nodes.uris());
            for (Subject subject : redlock) {
                try (Subject.Client first = subject.connect(uris, null);
                        Subject.Client second = subject.connect(uris, null)) {
                    pairsAndContention(subject, first, second, "smoke:redlock-pairs", "smoke:redlock",
                            Duration.ofMillis(500), stats, failures);
                } catch (Exception | LinkageError e) {
                    failures.add(subject.label() + ": " + Bench.describe(e));
                }
            }
            // every server saw the locks: Redlock's requests go to all of them, not to a majority only
            for (RedisServer node : nodes.nodes()) {
                assertThat(new ServerStats(node).commandCalls().keySet()).as("scripts run on %s", node.uri())
                        .anyMatch(command -> command.startsWith("eval"));
            }
        }
        assertThat(failures).isEmpty();
    }

    /**
     * Uncontended pairs on {@code pairsName} for 300 ms, then two threads in each of the two clients contending on
     * {@code contendedName} for {@code contention}; adds to {@code failures} what went wrong.
     */
    private static void pairsAndContention(Subject subject, Subject.Client first, Subject.Client second,
            String pairsName, String contendedName, Duration contention, ServerStats stats, List<String> failures)
            throws Exception {
        Lock warm = first.lock(pairsName);
        warm.lock(); // the first lock may set things up (scripts, subscriptions): not timed
        warm.unlock();
        Results.Run pairs = Loops.pairs(List.of(warm), Duration.ofMillis(300), stats);
        if (pairs.ops == 0) {
            // a line in a class loader of its own starts cold (its own Netty and Lettuce, interpreted): on a loaded
            // machine its first 300 ms may end before its first pair
            pairs = Loops.pairs(List.of(warm), Duration.ofSeconds(3), stats);
        }
        List<Lock> contenders = List.of(first.lock(contendedName), first.lock(contendedName),
                second.lock(contendedName), second.lock(contendedName));
        Results.Run contended = Loops.contention(contenders, contention, stats);
        if (pairs.ops == 0) {
            failures.add(subject.label() + ": no lock+unlock pair in 300 ms, nor in 3 s after them");
        }
        if (contended.ops == 0) {
            failures.add(subject.label() + ": no acquisition under contention in " + contention.toMillis() + " ms");
        }
        if (!contended.exclusive()) {
            failures.add(subject.label() + ": mutual exclusion violated: " + contended.overlaps
                    + " overlaps, counter " + contended.counter + " after " + contended.ops + " acquisitions");
        }
    }

    @Test
    void springSixWithALeaseExpiresItsLocksAfterThatLease() throws Exception {
        Subject spin = SpringSubject.of(spring6, RedisLockType.SPIN_LOCK);
        server.flushAll();
        try (Subject.Client client = spin.connect(server.uri(), Duration.ofMillis(1500))) {
            Lock lock = client.lock("smoke:lease");
            lock.lock();
            try {
                long pttl = Long.parseLong(server.execute("PTTL", "bench-spring" + spring6.version() + ":smoke:lease"));
                assertThat(pttl).isBetween(1L, 1500L); // not the registry's default of 60 s
            } finally {
                lock.unlock();
            }
        }
    }

    @Test
    void heldLocksAreCountedRenewedAndReleased() throws Exception {
        Subject relock = subjects.get(0);
        // HeldLocks forces full collections (System.gc()) while the locks are held, and a hold whose renewal is not
        // confirmed by its deadline (lease - drift after the last confirmed one was sent) is reported lost: the lease
        // must outlast those pauses on a loaded machine, as it must outlast any pause
        Results.Held held = HeldLocks.run(relock, server.uri(), server, 300, Duration.ofMillis(1500),
                Duration.ofMillis(1200));
        assertThat(held.unlockFailures).isZero();
        assertThat(held.reportedLost).isZero();
        assertThat(held.roundTripsPerSecond).isPositive(); // renewals happened in the window
        assertThat(server.execute("DBSIZE")).isNotNull();
    }

    @Test
    void reportAndChartsAreWritten(@TempDir Path docs) throws Exception {
        BenchConfig config = BenchConfig.parse(new String[] {"--quick", "--out", docs.toString()});
        Bench bench = new Bench(config, server, subjects);
        ServerStats stats = new ServerStats(server);
        Subject relock = subjects.get(0);
        Results.Scenario s1 = new Results.Scenario("S1", "1 thread, uncontended lock+unlock");
        Results.Scenario s3p = new Results.Scenario("S3p", "clients on one lock");
        try (Subject.Client client = relock.connect(server.uri(), null)) {
            Results.SubjectRuns pairs = new Results.SubjectRuns(relock);
            pairs.runs.add(Loops.pairs(List.of(client.lock("smoke:report")), Duration.ofMillis(100), stats));
            s1.subjects.add(pairs);
            Results.PairedTurns turns = new Results.PairedTurns("Spring RedisLockRegistry 6.5.5 SPIN", 0.1);
            turns.add(pairs.runs.get(0), pairs.runs.get(0));
            s1.paired = turns;
            Results.SubjectRuns contended = new Results.SubjectRuns(relock);
            contended.runs.add(Loops.contention(List.of(client.lock("smoke:r"), client.lock("smoke:r")),
                    Duration.ofMillis(200), stats));
            s3p.subjects.add(contended);
        }
        // S5's Redlock half is reported in S5's section, from the same runs (a stand-in here)
        Results.Scenario s1Redlock = new Results.Scenario("S1" + Report.REDLOCK, "Redlock, 1 thread");
        s1Redlock.subjects.add(s1.subjects.get(0));
        bench.scenarios.add(s1);
        bench.scenarios.add(s3p);
        bench.scenarios.add(s1Redlock);
        Report.Context context = new Report.Context();
        context.started = ZonedDateTime.now();
        context.cli = CliStartup.measure(null, server.uri(), 1);
        new Report(bench, context).write(docs);
        String md = Files.readString(docs.resolve("BENCHMARKS.md"));
        assertThat(md).contains("## Targets (issue 41", "## S1:", "## S3p:", "S6 CLI start-up", "Redis calls/pair",
                "≥ 1.0× the fastest peer line (moonshot ≥ 1.5×)", "Paired turns, after the runs above",
                "median **1.00×**", "## What an uncontended pair costs Redis, part by part", "Not measured in this run");
        assertThat(md.substring(md.indexOf("## S5:"))).contains("### S1-Redlock: Redlock, 1 thread")
                .doesNotContain("(S1 and S3p): not run");
        assertThat(docs.resolve("bench/throughput-s1.png")).isNotEmptyFile();
        assertThat(docs.resolve("bench/redis-cpu-s1.png")).isNotEmptyFile();
        assertThat(docs.resolve("bench/handoff-s3p.png")).isNotEmptyFile();
    }

    /**
     * Every protocol of the part-by-part table takes and gives back its lock with the calls its row names (relock's
     * own scripts: the 10 that BENCHMARKS.md's S1 counts), and the report lists them with relock's first.
     */
    @Test
    void protocolCostsRunEveryVariantWithTheCallsItsRowNames(@TempDir Path docs) throws Exception {
        server.flushAll();
        List<ProtocolCosts.Cost> costs = new ProtocolCosts(true).measure(server);
        assertThat(costs).allSatisfy(cost -> assertThat(cost.error()).as(cost.variant().id()).isNull());
        assertThat(costs).extracting(c -> c.variant().id()).containsExactly("relock", "unawaited", "fast", "marked",
                "counted", "unfenced", "string", "plain", "floor");
        assertThat(costs).extracting(c -> Math.round(c.callsPerPair() * 10) / 10.0)
                .containsExactly(10.0, 10.0, 10.0, 9.0, 9.0, 8.0, 7.0, 6.0, 4.0);
        assertThat(costs).allSatisfy(cost -> assertThat(cost.turns()).isEqualTo(2));

        BenchConfig config = BenchConfig.parse(new String[] {"--quick", "--out", docs.toString()});
        Report.Context context = new Report.Context();
        context.started = ZonedDateTime.now();
        context.protocol = costs;
        new Report(new Bench(config, server, subjects), context).write(docs);
        String section = Files.readString(docs.resolve("BENCHMARKS.md"))
                .split("## What an uncontended pair costs Redis, part by part", -1)[1].split("\n## ", 2)[0];
        assertThat(section).contains("| relock as shipped: acquire.lua", "| nothing | ", "| 10.0 | ", " 1.00× |",
                "| the floor: SET NX PX", "still cost");
    }

    /**
     * The scaling part's counts on one server (the Cluster, Sentinel and Redlock topologies are left to the full run:
     * forming them takes longer than the rest of this class), and its section put in place of an earlier one.
     */
    @Test
    void scalingCountsConnectionsWaitersAndHoldersAndItsSectionReplacesTheEarlierOne(@TempDir Path docs)
            throws Exception {
        Scaling scaling = new Scaling(true);
        List<Scaling.ConnectionCount> connections = scaling.connectionsOnOneServer(List.of(subjects.get(0)));
        // a relock client keeps one connection for commands and one for pub/sub, and closes both
        assertThat(connections).singleElement().satisfies(count -> {
            assertThat(count.atRest()).isEqualTo(2);
            assertThat(count.afterThreads()).isEqualTo(2);
            assertThat(count.afterClose()).isZero();
        });
        Scaling.Crowd crowd = scaling.crowd(3, 2);
        assertThat(crowd.sameClient().length + crowd.acrossClients().length).as("hand-offs").isEqualTo(5);
        assertThat(crowd.queuedInRedis()).isBetween(1, 6);
        // the waiting clients' pub/sub connections, and maybe the holder's
        assertThat(crowd.subscribedConnections()).isBetween(3, 4);
        Scaling.Holders holders = scaling.holders(3, 5, Duration.ofMillis(500));
        assertThat(holders.locks()).isEqualTo(15);
        assertThat(holders.memoryBytesPerLock()).isPositive();
        assertThat(holders.lost()).isZero();

        List<Scaling.ClusterSize> cluster = List.of(
                new Scaling.ClusterSize("7.0.15", 1, new double[] {30}, new double[] {10}, 1000, new double[] {0}, 0.8),
                new Scaling.ClusterSize("7.0.15", 2, new double[] {31, 32}, new double[] {10, 10}, 1000,
                        new double[] {0, 0}, 0.8));
        String section = new ScalingReport(new ScalingReport.Measured(connections, crowd, holders, cluster, "now",
                "abc1234", 0.1, 0.2)).section(docs.resolve("bench"));
        Path report = docs.resolve("BENCHMARKS.md");
        Files.writeString(report, "# relock benchmarks\n\n" + ScalingReport.HEADING + "\n\nearlier figures\n\n"
                + "## Charts\n\nimages\n");
        ScalingReport.splice(report, section);
        String md = Files.readString(report);
        assertThat(md).doesNotContain("earlier figures").contains("### Connections per client",
                "### Many waiters: 6 threads on one lock across 3 clients", "### Many holders: 15 locks held",
                "2 masters against 1: 1.05×").endsWith("## Charts\n\nimages\n");
        assertThat(md.split(ScalingReport.HEADING, -1)).hasSize(2);
        assertThat(docs.resolve("bench/scaling-cluster-cpu.png")).isNotEmptyFile();
    }
}
