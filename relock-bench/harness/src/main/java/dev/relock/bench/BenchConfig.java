package dev.relock.bench;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;

/**
 * How long and how often to measure, and where things are.
 *
 * @param quick the one-minute smoke run: one short repeat, S4 with 5,000 locks only, no JMH unless --jmh
 * @param only scenario ids to run (S1, S2, S3, S3p, S4, S5, S5R = S5's Redlock half, S6,
 *     ceilings, jmh, protocol, scaling); empty = all
 * @param waitQuietMinutes wait up to this long for a 1-minute load average below 0.7 before measuring
 * @param pairedTurn how long each of relock and S1's fastest peer runs in one of S1's paired turns
 * @param pairedTurns how many paired turns S1 ends with
 * @param springIntegration6 the jars of Spring Integration 6.5 and its dependencies
 */
record BenchConfig(boolean quick, Duration warmUp, Duration measure, int repeats, Duration pairedTurn,
        int pairedTurns, List<Integer> heldCounts, Duration heldLease, Duration heldWindow, Path out, Path redisson3,
        Path redisson4, Path springIntegration6, Path cli, Path workTree, Path analysis, Set<String> only, boolean jmh,
        int waitQuietMinutes) {

    static BenchConfig parse(String[] args) {
        boolean quick = false;
        Boolean jmh = null;
        Path workTree = Path.of(System.getProperty("relock.bench.worktree", ".")).toAbsolutePath().normalize();
        Path out = workTree.resolve("docs");
        Path redisson3 = Path.of(System.getProperty("relock.bench.redisson3",
                workTree.resolve("relock-bench/redisson-3/target/lib").toString()));
        Path redisson4 = Path.of(System.getProperty("relock.bench.redisson4",
                workTree.resolve("relock-bench/redisson-4/target/lib").toString()));
        Path springIntegration6 = Path.of(System.getProperty("relock.bench.springIntegration6",
                workTree.resolve("relock-bench/spring-integration-6/target/lib").toString()));
        Path cli = workTree.resolve("relock");
        Path analysis = workTree.resolve("relock-bench/ANALYSIS.md");
        Set<String> only = Set.of();
        int waitQuiet = 0;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--quick" -> quick = true;
                case "--no-jmh" -> jmh = false;
                case "--jmh" -> jmh = true;
                case "--out" -> out = Path.of(args[++i]).toAbsolutePath();
                case "--redisson3" -> redisson3 = Path.of(args[++i]);
                case "--redisson4" -> redisson4 = Path.of(args[++i]);
                case "--spring-integration6" -> springIntegration6 = Path.of(args[++i]);
                case "--cli" -> cli = Path.of(args[++i]).toAbsolutePath();
                case "--only" -> only = Set.of(args[++i].split(","));
                case "--wait-quiet" -> waitQuiet = Integer.parseInt(args[++i]);
                default -> throw new IllegalArgumentException("unknown argument " + args[i]
                        + "; use --quick, --jmh, --no-jmh, --wait-quiet MINUTES, --out DIR, --only S1,S2,S3,S3p,S4,S5,S5R,S6,ceilings,jmh,protocol,scaling");
            }
        }
        boolean withJmh = jmh != null ? jmh : !quick; // JMH forks its own JVM: too slow for the one-minute run
        return quick
                ? new BenchConfig(true, Duration.ofMillis(250), Duration.ofMillis(500), 1, Duration.ofMillis(100), 6,
                        List.of(5_000), Duration.ofSeconds(3), Duration.ofMillis(2_500), out, redisson3, redisson4,
                        springIntegration6, cli, workTree, analysis, only, withJmh, waitQuiet)
                : new BenchConfig(false, Duration.ofMillis(1_000), Duration.ofMillis(1_500), 3, Duration.ofMillis(250),
                        16, List.of(5_000, 100_000), Duration.ofSeconds(5), Duration.ofSeconds(6), out, redisson3,
                        redisson4, springIntegration6, cli, workTree, analysis, only, withJmh, waitQuiet);
    }

    boolean runs(String scenario) {
        return only.isEmpty() || only.contains(scenario);
    }
}
