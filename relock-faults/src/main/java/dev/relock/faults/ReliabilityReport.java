package dev.relock.faults;

import dev.relock.testredis.RedisBinary;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Locale;

/**
 * Writes docs/RELIABILITY.md, one table row per scenario with the claim of docs/guarantees.md beside what was found, and the
 * chart of unavailability beside it ({@link UnavailabilityChart}).
 */
final class ReliabilityReport {

    /**
     * Where a row was measured: the commit ({@code git rev-parse --short HEAD}, with {@code +changes} when relock-core's
     * or the campaign's sources differed from it), the campaign's seed, and the seconds the scenario ran.
     */
    record Measurement(String commit, long seed, long seconds) {}

    /** One scenario's result; {@code servers} says what they were ({@link LockServers#describe()}). */
    record Row(Scenario<?> scenario, String servers, Findings findings, Measurement measured) {

        /**
         * 0 stale fenced writes accepted everywhere (registers and SQL row); where docs/guarantees.md says exclusion
         * holds, 0 untold overlaps, no item lost or taken twice, no signal lost, no latch opened early and no
         * opening missed.
         */
        boolean passed() {
            return findings.staleWritesAccepted() == 0 && findings.staleSqlWritesAccepted() == 0
                    && (!scenario.safe() || (findings.untoldOverlaps() == 0 && findings.queue().clean()
                            && findings.latch().clean()));
        }

        /** The row's anchor in the report, which docs/guarantees.md links to: {@code fault-} and the name's words. */
        String anchor() {
            return anchorOf(scenario.name());
        }
    }

    /** The heading of the report's part written by hand, after the run, which writing the report again keeps. */
    static final String HAND_WRITTEN = "## Found by the campaign and by CI";

    private ReliabilityReport() {
    }

    /** {@code fault-} and the lower-case words of a scenario's name, joined by dashes. */
    static String anchorOf(String scenarioName) {
        return "fault-" + scenarioName.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]+", "-").replaceAll("^-|-$", "");
    }

    static void write(Path file, List<Row> rows) throws IOException {
        Path dir = file.toAbsolutePath().getParent();
        Files.createDirectories(dir);
        String chart = "reliability/unavailability.png";
        UnavailabilityChart.write(rows, dir.resolve(chart));
        StringBuilder md = new StringBuilder();
        md.append("# relock under faults\n\n");
        md.append("Written by `relock-faults/run.sh` (").append(Instant.now().truncatedTo(ChronoUnit.SECONDS))
                .append("). Each row says where it was measured: the commit, the seed and how long the scenario ran; ")
                .append("replay one with `relock-faults/run.sh --seed S --only NAME` at that commit (`--only` runs ")
                .append("merge their rows into this report). `relock-faults/run.sh --stale` lists the protocol files ")
                .append("changed since the oldest row's commit.\n\n");
        md.append("Servers: redis-server ").append(RedisBinary.resolve().version()).append(" (")
                .append(RedisBinary.resolve().source()).append("); workers on Java ")
                .append(Runtime.version().feature()).append(".\n\n");
        md.append("Each scenario is a workload under a fault. It runs ").append(Campaign.WORKERS)
                .append(" worker processes (separate JVMs), ")
                .append("with a lease of ").append(Campaign.LEASE.toMillis()).append(" ms renewed by the lease keeper and a ")
                .append("command timeout of ").append(Campaign.COMMAND_TIMEOUT.toMillis()).append(" ms. The exclusive lock's ")
                .append("workers (one thread each) loop on one lock: inside each critical ")
                .append("section a worker reads a plain counter, works 1 ms, writes it back one higher (unfenced), then ")
                .append("makes two fenced writes: a register through relock's `RedisFence` on a second Redis, and a row ")
                .append("of a SQL table through `JdbcFence` (H2, served over TCP by the campaign's JVM). No fault ")
                .append("touches these resources. Every step goes to the worker's history with ")
                .append("its `System.nanoTime()` stamp (one `CLOCK_MONOTONIC` for every process on the host); the checker ")
                .append("(`HistoryChecker`) merges them afterwards. A worker killed by a fault is replaced by a new one.\n\n");
        md.append("The other workloads (`Workload`), each named before its fault:\n\n");
        md.append("- **exclusive lock, 3 threads a worker**: the same sections from three threads of each worker, so a ")
                .append("client also hands the lock between its own threads.\n");
        md.append("- **read-write lock**: two threads a worker, one section in three a write (as above), the others ")
                .append("reads; a write beside a read or a write is an overlap. Readers that got in while a writer that ")
                .append("asked first still waited are counted (a statistic of writer preference, not a verdict: a ")
                .append("request is stamped before it reaches Redis).\n");
        md.append("- **semaphore**: ").append(SemaphoreSections.PERMITS).append(" permits, two threads a worker taking ")
                .append("one each; a permit taken while ").append(SemaphoreSections.PERMITS).append(" others were out ")
                .append("is an overlap, and max unavailable counts a waiter while fewer were out.\n");
        md.append("- **condition**: a producer and two consumers a worker on a list in the resource Redis, under the ")
                .append("lock and its condition, one consumer with the thread's lock and `await`, the other with ")
                .append("handles and `awaitAsync`, ending one await in ").append(QueueSections.ENDED_EARLY_ONE_IN)
                .append(" early by closing its handle or cancelling its stage; no item lost or taken twice (the list is drained at the end), and no ")
                .append("signal lost: an item still untaken ").append(QueueChecker.GRACE_NANOS / 1_000_000_000)
                .append(" s after its signal while a consumer awaited throughout (`QueueChecker`).\n");
        md.append("- **count-down latch**: rounds armed by a coordinator in the campaign's JVM, in ")
                .append(LatchRounds.LANES).append(" lanes at once; in each lane a counter and two waiters a worker; ")
                .append("one round in ").append(LatchCoordinator.NEVER_OPENING).append(" needs one ")
                .append("count-down more than there are counters and expires unopened. No waiter may wake before the ")
                .append("count's worth of count-downs was sent, nor miss an opening (`LatchChecker`).\n");
        md.append("- **multi-lock**: two threads a worker, each section a multi-lock of two of three locks with a ")
                .append("fenced write to each member's register; exclusion is judged on each member.\n\n");
        md.append("- **untold overlaps**: sections that began while another worker was in its section and had not been ")
                .append("told its lease was lost: 0 wherever the README says exclusion is kept.\n");
        md.append("- **stale writes accepted**: fenced writes accepted with a lower token than a write ")
                .append("that had already been answered, or with the token another worker had already written with (one ")
                .append("token, two holders), at the Redis register / the SQL row: must be 0 in every scenario.\n");
        md.append("- **refused**: stale writes the fences refused (overlaps that fencing caught), register / SQL row.\n");
        md.append("- **lost updates**: increments of the unfenced counter that another overwrote: what fencing saved.\n");
        md.append("- **notices**: lease-lost notices, and how many came before / after the overlap their hold caused.\n");
        md.append("- **max unavailable**: the longest time with a worker waiting and nobody in a section (for the ")
                .append("semaphore: fewer sections than permits).\n");
        md.append("- **workload checks**: what the workload's own checker found (items, signals, latch rounds, ")
                .append("readers past a waiting writer); where the README says exclusion is kept, none lost, doubled, ")
                .append("early or missed.\n\n");
        md.append("| scenario | lock servers | critical sections | faults | untold overlaps | stale writes accepted | ")
                .append("refused | lost updates | notices (before/after) | max unavailable | workload checks | README claim | ")
                .append("verdict | measured at |\n");
        md.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (Row row : rows) {
            Findings f = row.findings();
            Scenario<?> s = row.scenario();
            md.append("| <a id=\"").append(row.anchor()).append("\"></a>").append(s.name())
                    .append(" ([`").append(s.injectedBy()).append("`](../").append(s.injectorSource()).append("))")
                    .append(" | ").append(row.servers())
                    .append(" | ").append(f.criticalSections())
                    .append(" | ").append(f.faults())
                    .append(" | ").append(f.untoldOverlaps())
                    .append(" | ").append(f.staleWritesAccepted()).append(" / ").append(f.staleSqlWritesAccepted())
                    .append(" | ").append(f.refusedWrites()).append(" / ").append(f.refusedSqlWrites())
                    .append(" | ").append(f.unfencedLostUpdates())
                    .append(" | ").append(f.lostNotices()).append(" (").append(f.lostNoticesBeforeOverlap()).append('/')
                    .append(f.lostNoticesAfterOverlap()).append(')')
                    .append(" | ").append(f.maxUnavailableNanos() / 1_000_000).append(" ms")
                    .append(" | ").append(workloadChecks(f))
                    .append(" | ").append(s.claim())
                    .append(" | ").append(verdict(row))
                    .append(" | `").append(row.measured().commit()).append("`, seed ").append(row.measured().seed())
                    .append(", ").append(row.measured().seconds()).append(" s")
                    .append(" |\n");
        }
        md.append("\nEach scenario's name links the code that injects its fault; the scenarios and their claims are in ")
                .append("`relock-faults/src/main/java/dev/relock/faults/Scenario.java`.\n");
        md.append("\nA section works 1 ms, so a fault on a worker rarely finds it inside one: mostly it catches the worker ")
                .append("acquiring or releasing. A release lost to a black hole, a late reply or a frozen Redis leaves the ")
                .append("lock taken until its lease ends (the worker's unlock throws within the command timeout), which is why ")
                .append("those rows show about one lease (1.5 s) of unavailability and no lost-lease notice: the worker ")
                .append("had left its section, so there was no hold left to lose. A holder cut off ")
                .append("inside a long section and told at its deadline is shown by the targeted tests the README names ")
                .append("(`PartitionFaultTest`, `RedisDownFaultTest`).\n");
        md.append("\n![Longest unavailability by fault](").append(chart).append(")\n");
        md.append("\n## Where exclusion can break, and what fencing did\n\n");
        md.append("An untold overlap is counted per section that began beside the stale holder: one client frozen ")
                .append("past its lease shows as every section the others ran meanwhile. Where exclusion broke, fencing ")
                .append("contained it when the stale holder's fenced write came after the new holder's (refused); a stale ")
                .append("write that lands before the new holder's first write is accepted and then overwritten, which ")
                .append("neither fence can tell apart, and the unfenced counter shows the updates lost. A section ")
                .append("works 1 ms, so a fault shows as an overlap only when it lands inside one and the section ")
                .append("outlasts it (a frozen holder always does; a restart of a few hundred ms rarely): where a ")
                .append("scenario that can break exclusion shows none, its row says so, and the README's table names ")
                .append("the targeted test that shows the break.\n\n");
        for (Row row : rows) {
            Findings f = row.findings();
            if (row.scenario().safe() || f.untoldOverlaps() + f.refusedWrites() + f.refusedSqlWrites() == 0) {
                continue;
            }
            md.append("- **").append(row.scenario().name()).append("**: ").append(f.untoldOverlaps())
                    .append(" sections began beside a holder not yet told; the register refused ")
                    .append(f.refusedWrites()).append(" stale writes and the SQL row ").append(f.refusedSqlWrites())
                    .append(", and accepted ").append(f.staleWritesAccepted()).append(" and ")
                    .append(f.staleSqlWritesAccepted()).append(" out of order; the unfenced counter lost ")
                    .append(f.unfencedLostUpdates()).append(" updates. ").append(f.lostNotices())
                    .append(" holders were told their lease was lost (").append(f.lostNoticesBeforeOverlap())
                    .append(" before the overlap their hold caused, ").append(f.lostNoticesAfterOverlap())
                    .append(" after).\n");
        }
        md.append("\n").append(notYetCovered()).append('\n');
        md.append(handWritten(file));
        Files.writeString(file, md, StandardCharsets.UTF_8);
    }

    /**
     * The part of the report written by hand, kept when the report is written again (a run of some scenarios must not
     * lose it): from the heading {@value #HAND_WRITTEN} to the end of the report now, "" if it has none.
     */
    private static String handWritten(Path file) throws IOException {
        if (!Files.exists(file)) {
            return "";
        }
        String text = Files.readString(file, StandardCharsets.UTF_8);
        int start = text.indexOf("\n" + HAND_WRITTEN + "\n");
        return start < 0 ? "" : text.substring(start);
    }

    /** What the campaign does not inject yet; the README's table rests on targeted tests for these. */
    private static String notYetCovered() {
        return "Not in the campaign yet (the README's table rests on targeted tests for them): the workloads beside "
                + "the exclusive lock on a Cluster, and the multi-lock on Redlock (a Redlock client refuses semaphores, "
                + "latches and conditions).";
    }

    /** The workload's own findings in a few words, "–" where it has none. */
    private static String workloadChecks(Findings f) {
        List<String> parts = new java.util.ArrayList<>();
        if (f.queue().produced() > 0) {
            parts.add(f.queue().taken() + " of " + f.queue().produced() + " items taken, " + f.queue().lost() + " lost, "
                    + f.queue().duplicated() + " taken twice, " + f.queue().lostSignals() + " signals lost");
        }
        if (f.latch().rounds() > 0) {
            parts.add(f.latch().operations() + " operations (count-downs and awaits), " + f.latch().opened() + " of "
                    + f.latch().rounds() + " rounds opened, " + f.latch().wakeups()
                    + " waiters woken, " + f.latch().openedEarly() + " early, " + f.latch().missedWakeups()
                    + " missed");
        }
        if (f.readersPastAWaitingWriter() > 0) {
            parts.add(f.readersPastAWaitingWriter() + " readers past a waiting writer");
        }
        return parts.isEmpty() ? "–" : String.join("; ", parts);
    }

    private static String verdict(Row row) {
        if (!row.passed()) {
            return "**FAILED**";
        }
        int overlaps = row.findings().untoldOverlaps();
        if (row.scenario().workload() == Workload.LATCH) {
            return row.scenario().safe() ? "as claimed: none early, none missed" : "counted";
        }
        return row.scenario().safe() ? "as claimed: exclusion kept"
                : "as claimed: " + (overlaps == 0 ? "no overlap in this run" : "exclusion broke (" + overlaps
                        + " sections)") + ", no stale write accepted";
    }
}
