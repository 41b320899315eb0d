package dev.relock.bench;

import dev.relock.testredis.RedisNodes;
import dev.relock.testredis.RedisServer;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.util.List;
import java.util.Map;

/**
 * The benchmark runner (started by relock-bench/run.sh): one private redis-server, every scenario,
 * then docs/BENCHMARKS.md and docs/bench/*.png.
 */
public final class BenchMain {

    /**
     * Spring's renewal scheduler logs every renewal that unlock() interrupts (it cancels the task
     * with cancel(true)) as SEVERE with a stack trace, through java.util.logging; harmless here and
     * it would bury the progress lines. Kept in a field: JUL holds loggers weakly.
     */
    private static final java.util.logging.Logger SPRING_SCHEDULING =
            java.util.logging.Logger.getLogger("org.springframework.scheduling");
    /**
     * Lettuce (in Spring 6.5's class loader, logging through java.util.logging) logs every message that reaches a
     * Spring listener container after its executor shut down, as SEVERE with a stack trace; harmless at close.
     */
    private static final java.util.logging.Logger LETTUCE_PUB_SUB =
            java.util.logging.Logger.getLogger("io.lettuce.core.pubsub.PubSubEndpoint");

    public static void main(String[] args) throws Exception {
        System.setProperty("java.awt.headless", "true");
        SPRING_SCHEDULING.setLevel(java.util.logging.Level.OFF);
        LETTUCE_PUB_SUB.setLevel(java.util.logging.Level.OFF);
        BenchConfig config = BenchConfig.parse(args);
        Report.Context context = new Report.Context();
        context.waitedForQuiet = waitForQuiet(config.waitQuietMinutes());
        context.started = ZonedDateTime.now();
        context.loadBefore = Environment.load();
        String beforeBuild = System.getProperty("relock.bench.loadBeforeBuild");
        if (beforeBuild != null && !beforeBuild.isBlank()) {
            context.loadBeforeBuild = Double.parseDouble(beforeBuild.trim());
        }
        // read before anything is written: the scaling section's chart goes into the work tree's docs/bench
        context.gitState = Environment.gitState(config.workTree());
        long start = System.nanoTime();
        RedissonLine redisson3 = RedissonLine.load(config.redisson3());
        RedissonLine redisson4 = RedissonLine.load(config.redisson4());
        SpringLine spring6 = SpringLine.load(config.springIntegration6());
        List<Subject> subjects = Bench.allSubjects(redisson3, redisson4, spring6);
        if (config.only().equals(java.util.Set.of("scaling"))) {
            // only this part: its section replaces the one in the report an earlier full run wrote
            Path report = config.out().resolve("BENCHMARKS.md");
            String section = scaling(config, subjects, context);
            ScalingReport.splice(report, section);
            Progress.say("put the scaling section into %s in %.0f s", report, (System.nanoTime() - start) / 1e9);
            System.exit(0);
        }
        Progress.say("relock-bench%s: %d subjects, load %.2f", config.quick() ? " --quick" : "", subjects.size(),
                context.loadBefore);
        try (RedisServer server = RedisServer.start()) {
            Bench bench = new Bench(config, server, subjects);
            context.redisVersion = bench.stats.info("server", "redis_version");
            context.redisBinary = server.binary().path().toString();
            Progress.say("private redis-server %s on %s", context.redisVersion, server.uri());
            run(bench, config, context, server, redisson3, redisson4);
            if (config.runs("scaling")) {
                context.scaling = scaling(config, subjects, context);
            }
            context.loadAfter = Environment.load();
            context.wallSeconds = (System.nanoTime() - start) / 1e9;
            context.relock = Environment.relockVersion();
            context.redisson3 = redisson3.version();
            context.redisson4 = redisson4.version();
            context.springIntegration = Environment.versionOf(
                    org.springframework.integration.redis.util.RedisLockRegistry.class);
            context.springDataRedis = Environment.versionOf(
                    org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory.class);
            context.lettuce = Environment.versionOf(io.lettuce.core.RedisClient.class);
            context.springIntegration6 = spring6.version();
            context.springDataRedis6 = spring6.versionOf("spring-data-redis");
            context.springFramework6 = spring6.versionOf("spring-core");
            context.lettuce6 = spring6.versionOf("lettuce-core");
            new Report(bench, context).write(config.out());
            Progress.say("wrote %s and %s in %.0f s", config.out().resolve("BENCHMARKS.md"),
                    config.out().resolve("bench"), context.wallSeconds);
        }
        // Redisson and Spring leave non-daemon threads behind when a shutdown is slow; we are done
        System.exit(0);
    }

    private static void run(Bench bench, BenchConfig config, Report.Context context, RedisServer server,
            RedissonLine redisson3, RedissonLine redisson4) throws Exception {
        if (config.runs("ceilings")) {
            Path benchmark = ServerCeilings.find(server.binary().path());
            if (benchmark == null) {
                context.ceilingsNote = "Skipped: no redis-benchmark beside " + server.binary().path() + " or on the PATH.";
            } else {
                Progress.say("server ceilings with %s", benchmark);
                try {
                    context.ceilings = ServerCeilings.measure(benchmark, server.port(), config.quick());
                } catch (Exception e) {
                    context.ceilingsNote = "redis-benchmark failed: " + Bench.describe(e);
                }
                server.flushAll();
            }
        }
        if (config.runs("S1") || config.runs("S2") || config.runs("S3")) {
            Progress.say("connecting one client per subject");
            Map<Subject, Object> clients = bench.connectAll(s -> true);
            try {
                if (config.runs("S1")) {
                    Progress.say("S1: 1 thread, one lock, uncontended");
                    Results.Scenario s1 = bench.pairs("S1", "1 thread, uncontended lock+unlock", 1, clients);
                    bench.pairedTurns(s1, clients);
                }
                if (config.runs("S2")) {
                    Progress.say("S2-16: 16 threads, each on its own lock");
                    bench.pairs("S2-16", "16 threads, each on its own lock", 16, clients);
                    Progress.say("S2-64: 64 threads, each on its own lock");
                    bench.pairs("S2-64", "64 threads, each on its own lock", 64, clients);
                }
                if (config.runs("S3")) {
                    Progress.say("S3: 8 threads of one client on one lock");
                    bench.contentionOneClient(clients);
                }
            } finally {
                Bench.closeAll(clients);
            }
        }
        if (config.runs("protocol")) {
            Progress.say("what an uncontended pair costs Redis, part by part (relock's scripts and lighter protocols)");
            context.protocol = new ProtocolCosts(config.quick()).measure(server);
            for (ProtocolCosts.Cost cost : context.protocol) {
                Progress.say("  %s", cost.ok() ? String.format("%.1f µs in commands, %.1f µs CPU, %.1f calls a pair: %s",
                        cost.commandMicrosPerPair(), cost.cpuMicrosPerPair(), cost.callsPerPair(),
                        cost.variant().name()) : "failed: " + cost.error());
            }
            server.flushAll();
        }
        if (config.runs("S3p")) {
            Progress.say("S3p: 8 clients on one lock");
            bench.contentionEightClients("S3p", "", 8);
        }
        if (config.runs("S5")) {
            Progress.say("S5: read-write lock, 8 clients, 90 %% reads");
            bench.readWrite(8);
        }
        if (config.runs("S5R")) {
            redlock(bench, config, redisson3, redisson4);
        }
        if (config.runs("S4")) {
            for (int count : config.heldCounts()) {
                Progress.say("S4: %,d locks held at once", count);
                bench.heldLocks(count, s -> s.family().equals("relock") || s.label().endsWith(" RLock")
                        || s.label().endsWith(" SPIN"));
            }
        }
        if (config.runs("S6")) {
            Progress.say("S6: CLI start-up (%s)", config.cli());
            context.cli = CliStartup.measure(config.cli(), server.uri(), config.quick() ? 3 : 10);
            Progress.say("  %s", context.cli.pending() != null ? context.cli.pending()
                    : String.format("median %.3f s", Stats.median(context.cli.seconds())));
        }
        if (config.runs("jmh") && config.jmh()) {
            Progress.say("JMH hot-path microbenchmarks (-prof gc)");
            try {
                Path log = config.workTree().resolve("relock-bench/harness/target/jmh.log");
                context.micro = Micro.run(server.uri(), config.quick(), log);
                for (Micro.Figure f : context.micro) {
                    Progress.say("  %s: %,.0f ops/s, %,.0f B/op", f.benchmark(), f.opsPerSecond(), f.bytesPerOp());
                }
            } catch (Exception e) {
                context.microNote = "JMH failed: " + Bench.describe(e);
                Progress.say("  %s", context.microNote);
            }
        } else {
            context.microNote = "Not run" + (config.quick() ? " in quick mode (add --jmh)" : " (--no-jmh)") + ".";
        }
    }

    /**
     * S5's second half: S1 and S3p on Redlock over five more private servers of their own,
     * started for this and stopped after; the scenarios join {@code bench}'s as S1-Redlock and
     * S3p-Redlock.
     */
    private static void redlock(Bench bench, BenchConfig config, RedissonLine redisson3, RedissonLine redisson4)
            throws InterruptedException {
        try (RedisNodes nodes = RedisNodes.builder(5).start()) {
            Bench redlock = Bench.overNodes(config, nodes, Bench.redlockSubjects(redisson3, redisson4));
            Progress.say("S1-Redlock: 1 thread, uncontended, Redlock over %d private servers %s", nodes.size(),
                    nodes.uris());
            Map<Subject, Object> clients = redlock.connectAll(s -> true);
            try {
                redlock.pairs("S1-Redlock", "Redlock over 5 servers, 1 thread, uncontended lock+unlock", 1, clients);
            } finally {
                Bench.closeAll(clients);
            }
            Progress.say("S3p-Redlock: 8 clients on one lock, Redlock over %d servers", nodes.size());
            redlock.contentionEightClients("S3p-Redlock", "Redlock over 5 servers, ", 8);
            bench.scenarios.addAll(redlock.scenarios);
        }
    }

    /**
     * Scaling past one Redis ({@link Scaling}): its servers are its own, started and stopped here. Returns the report's
     * section, its chart written under {@code config.out()}.
     */
    private static String scaling(BenchConfig config, List<Subject> subjects, Report.Context context)
            throws Exception {
        Progress.say("scaling past one Redis");
        Scaling scaling = new Scaling(config.quick());
        double loadBefore = Environment.load();
        String when = ZonedDateTime.now().format(java.time.format.DateTimeFormatter.ofPattern("d MMM yyyy, HH:mm",
                java.util.Locale.ENGLISH));
        List<Subject> peers = subjects.stream()
                .filter(s -> !s.family().equals("floor") && !s.family().equals("diagnostic")).toList();
        List<Scaling.ConnectionCount> connections = scaling.connections(peers);
        Scaling.Crowd crowd = scaling.crowd(50, config.quick() ? 4 : 20);
        Scaling.Holders holders = scaling.holders(100, config.quick() ? 10 : 100,
                Duration.ofSeconds(config.quick() ? 10 : 60));
        List<Scaling.ClusterSize> cluster = scaling.clusterSpread(Scaling.clusterBinaries());
        ScalingReport.Measured measured = new ScalingReport.Measured(connections, crowd, holders, cluster, when,
                Environment.gitState(config.workTree()), loadBefore, Environment.load());
        return new ScalingReport(measured).section(config.out().resolve("bench"));
    }

    /** Waits until the 1-minute load average drops below 0.7, checking every minute, at most {@code minutes}. */
    private static String waitForQuiet(int minutes) throws InterruptedException {
        if (minutes <= 0) {
            return null;
        }
        long deadline = System.nanoTime() + minutes * 60_000_000_000L;
        long start = System.nanoTime();
        while (true) {
            double load = Environment.load();
            if (Double.isNaN(load) || load < 0.7) {
                return String.format("waited %.0f s for a load below 0.7", (System.nanoTime() - start) / 1e9);
            }
            if (System.nanoTime() - deadline >= 0) {
                return String.format("waited %d min for a load below 0.7; it stayed at %.2f, so this ran anyway",
                        minutes, load);
            }
            Progress.say("load %.2f: waiting for a quiet machine (< 0.7), up to %d min", load, minutes);
            Thread.sleep(60_000);
        }
    }

    private BenchMain() {
    }
}
