package dev.relock.faults;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * One row of the campaign: a workload (what the workers do) and a fault (what is done to them or their servers): the
 * lock servers, the fault, how often it is injected, and what docs/guarantees.md claims of it.
 *
 * @param name the row's name in docs/RELIABILITY.md
 * @param workload what the workers do
 * @param claim what the fault table of docs/guarantees.md says of this fault, in short
 * @param safe whether docs/guarantees.md calls exclusion kept under it: then the verdict needs 0 untold
 *     overlaps; in every scenario it needs 0 stale fenced writes accepted
 * @param periodMillis the mean time between two injections (each is jittered by the seeded random);
 *     0 for no faults
 * @param servers starts the lock servers (before the workers)
 * @param fault what one injection does
 * @param injectedBy the class and method that inject the fault ({@code "OneServer#flushAll"}), for the report's link
 * @param lengthFactor how many times the campaign's seconds per scenario this one runs (1 for most): where each fault
 *     leaves the lock unavailable for seconds, a longer run still injects it often and collects 10,000 sections
 * @param quick whether {@code --quick} (CI's smoke test) runs it: each workload once under a fault, and the exclusive
 *     lock on each kind of lock servers
 * @param <S> the kind of lock servers
 */
record Scenario<S extends LockServers>(String name, Workload workload, String claim, boolean safe, long periodMillis,
        Supplier<S> servers, Fault<S> fault, String injectedBy, int lengthFactor, boolean quick) {

    /** A scenario of the single-threaded exclusive lock, run by the full campaign only. */
    Scenario(String name, String claim, boolean safe, long periodMillis, Supplier<S> servers, Fault<S> fault,
            String injectedBy) {
        this(name, Workload.EXCLUSIVE, claim, safe, periodMillis, servers, fault, injectedBy, 1, false);
    }

    /** This scenario, run {@code factor} times the campaign's seconds per scenario. */
    Scenario<S> lasting(int factor) {
        return new Scenario<>(name, workload, claim, safe, periodMillis, servers, fault, injectedBy, factor, quick);
    }

    /** This scenario, run by {@code --quick} too. */
    Scenario<S> inQuickRunToo() {
        return new Scenario<>(name, workload, claim, safe, periodMillis, servers, fault, injectedBy, lengthFactor,
                true);
    }

    /** This scenario's servers and fault under another workload, named after both; {@code quick} as given. */
    Scenario<S> with(Workload other, boolean inQuickRun) {
        // a latch has no holder: what it promises is about wake-ups, and a fault that loses keys may lose its count
        String otherClaim = other != Workload.LATCH ? claim : safe ? "no waiter woken early, none missed"
                : "not claimed: the fault can lose the latch's key (counted, not judged)";
        return new Scenario<>(other.label + ": " + name, other, otherClaim, safe, periodMillis, servers, fault,
                injectedBy, lengthFactor, inQuickRun);
    }

    /** One injection, on the campaign's thread; may block while the fault lasts. */
    @FunctionalInterface
    interface Fault<S> {
        /** Injects once; returns a short description for the history ("killed w3"), "" when nothing was done. */
        String inject(S servers, Campaign.Run run) throws Exception;
    }

    /** The file of the class that injects the fault, relative to the repository's root. */
    String injectorSource() {
        String type = injectedBy.contains("#") ? injectedBy.substring(0, injectedBy.indexOf('#')) : injectedBy;
        return "relock-faults/src/main/java/dev/relock/faults/" + type + ".java";
    }

    /**
     * The faults each workload beside the first meets in a full run, by scenario name; the first of each is its
     * baseline, the second the one fault {@code --quick} runs it under. The latch has no holder to freeze.
     */
    private static final Map<Workload, List<String>> FAULTS_BY_WORKLOAD = faultsByWorkload();

    private static Map<Workload, List<String>> faultsByWorkload() {
        String baseline = "none (baseline)";
        String kill = "client kill -9";
        String freeze = "holder SIGSTOP past the lease";
        String replyLost = "reply lost, connection reset or closed";
        String late = "replies late past commandTimeout";
        String restart = "Redis restart without persistence";
        String failover = "Sentinel planned failover";
        Map<Workload, List<String>> faults = new EnumMap<>(Workload.class);
        for (Workload workload : List.of(Workload.EXCLUSIVE_THREADS, Workload.READ_WRITE, Workload.SEMAPHORE,
                Workload.MULTI_LOCK)) {
            faults.put(workload, List.of(baseline, kill, freeze, replyLost, late, restart, failover));
        }
        // Redlock's read-write locks: readers and writers by majority, through node losses and empty restarts
        faults.put(Workload.READ_WRITE, List.of(baseline, kill, freeze, replyLost, late, restart, failover,
                "Redlock: 2 of 5 nodes killed", "Redlock: 3 of 5 restarted empty at once",
                "Redlock: 3 of 5 restarted empty after the lease", "Redlock: client cut off from a majority"));
        // the condition's and the latch's promises are about messages across reconnects: a lost reply, a reset
        faults.put(Workload.CONDITION, List.of(baseline, replyLost, kill, freeze, late, restart, failover));
        faults.put(Workload.LATCH, List.of(baseline, replyLost, kill, late, restart, failover));
        return faults;
    }

    /** The scenarios of this campaign, in report order: the exclusive lock's, then each other workload's. */
    static List<Scenario<?>> all() {
        List<Scenario<?>> exclusive = exclusiveLock();
        List<Scenario<?>> all = new ArrayList<>(exclusive);
        FAULTS_BY_WORKLOAD.forEach((workload, names) -> {
            for (String name : names) {
                Scenario<?> base = exclusive.stream().filter(s -> s.name().equals(name)).findFirst().orElseThrow(
                        () -> new IllegalStateException("no exclusive-lock scenario named '" + name + "'"));
                all.add(base.with(workload, names.indexOf(name) == 1));
            }
        });
        return List.copyOf(all);
    }

    /**
     * The scenarios of the single-threaded exclusive lock, every fault the campaign has; {@code --quick} runs the lock
     * once on each kind of lock servers (one Redis, Sentinel, Cluster, Redlock).
     */
    private static List<Scenario<?>> exclusiveLock() {
        return List.of(
                new Scenario<>("none (baseline)", "exclusive; fencing tokens rise", true, 0,
                        OneServer::plain, (servers, run) -> "", "Campaign"),
                new Scenario<>("client kill -9", "kept: nobody gets in before the killed holder's lease ran out",
                        true, 3_500, OneServer::plain, (servers, run) -> run.killAWorker(), "Campaign#killAWorker")
                        .inQuickRunToo(),
                new Scenario<>("holder SIGSTOP past the lease",
                        "broken while it is frozen; its stale write is refused and it is told when resumed",
                        false, 3_000, OneServer::plain, (servers, run) -> run.pauseTheHolderPastTheLease(),
                        "Campaign#pauseTheHolderPastTheLease"),
                new Scenario<>("client–Redis black hole past the lease",
                        "kept: the holder is told at its deadline, before anybody else gets in", true, 3_000,
                        OneServer::proxied, OneServer::blackholeAWorkerPastTheLease,
                        "OneServer#blackholeAWorkerPastTheLease"),
                new Scenario<>("reply lost, connection reset or closed",
                        "kept: a command run twice or with its reply lost neither doubles nor loses a hold", true, 3_000,
                        OneServer::proxiedWithCallerClients, OneServer::loseAReplyAndReset,
                        "OneServer#loseAReplyAndReset"),
                new Scenario<>("replies late past commandTimeout",
                        "kept: calls fail within the timeout; a holder whose renewals time out is told at its deadline",
                        true, 2_500, OneServer::proxied, OneServer::delayRepliesPastTheTimeout,
                        "OneServer#delayRepliesPastTheTimeout"),
                new Scenario<>("Redis frozen (SIGSTOP) past the lease",
                        "kept: the holder is told its lease ran out before anybody else gets in", true, 4_000,
                        OneServer::plain, OneServer::pauseRedisPastTheLease, "OneServer#pauseRedisPastTheLease"),
                new Scenario<>("Redis restart without persistence",
                        "broken until the holder's next renewal; fencing refuses the stale write", false, 3_000,
                        OneServer::plain, OneServer::restartEmpty, "OneServer#restartEmpty"),
                new Scenario<>("Redis restart delayed past the lease",
                        "kept: every holder was told at its deadline before Redis came back", true, 4_000,
                        OneServer::plain, OneServer::restartEmptyAfterTheLease, "OneServer#restartEmptyAfterTheLease"),
                new Scenario<>("Redis FLUSHALL", "as a restart without persistence", false, 3_000,
                        OneServer::plain, OneServer::flushAll, "OneServer#flushAll"),
                new Scenario<>("Redis SCRIPT FLUSH", "kept: the client loads its scripts again", true, 1_000,
                        OneServer::plain, OneServer::scriptFlush, "OneServer#scriptFlush"),
                new Scenario<>("eviction (allkeys-random)",
                        "broken until the holder's next renewal; fencing refuses the stale write", false, 2_000,
                        OneServer::evicting, OneServer::fillPastMaxmemory, "OneServer#fillPastMaxmemory"),
                new Scenario<>("Redis restart with appendfsync always",
                        "kept: every hold survives the restart", true, 3_000, OneServer::appendFsyncAlways,
                        OneServer::restart, "OneServer#restart"),
                new Scenario<>("Sentinel planned failover",
                        "broken for holds taken on the old master after the promotion, until the sentinels demote it "
                                + "(it takes writes meanwhile, lost then); the holder is told at its next renewal; "
                                + "fencing refuses whichever of the two writers has the lower token", false, 2_500, SentinelServers::unguarded,
                        SentinelServers::plannedFailover, "SentinelServers#plannedFailover").inQuickRunToo(),
                new Scenario<>("Sentinel planned failover, replication guard",
                        "kept: a hold is handed out only once the replica has it", true, 2_500,
                        SentinelServers::guarded, SentinelServers::plannedFailover, "SentinelServers#plannedFailover"),
                new Scenario<>("Sentinel master killed",
                        "broken for an acquisition the replica missed; the holder is told at its next renewal, "
                                + "fencing refuses its stale write", false, 500, SentinelServers::unguarded,
                        SentinelServers::killTheMaster, "SentinelServers#killTheMaster"),
                // guarded acquisitions wait for a replica, so each kill leaves the lock unavailable until the killed
                // master is back as the new one's replica (about 6 s): twice the run, for 20 kills and 10,000 sections
                new Scenario<>("Sentinel master killed, replication guard",
                        "kept: a hold is handed out only once the replica has it; 0 lost", true, 5_000,
                        SentinelServers::guarded, SentinelServers::killTheMaster, "SentinelServers#killTheMaster")
                        .lasting(2),
                new Scenario<>("Cluster failover", "kept: the client follows the promoted replica", true, 3_600,
                        ClusterServers::threeShards, ClusterServers::failoverTheLocksShard,
                        "ClusterServers#failoverTheLocksShard").inQuickRunToo(),
                new Scenario<>("Cluster master killed",
                        "broken for an acquisition the replica missed; the holder is told at its next renewal, "
                                + "fencing refuses its stale write", false, 5_000, ClusterServers::threeShards,
                        ClusterServers::killTheLocksMaster, "ClusterServers#killTheLocksMaster"),
                // as on Sentinel, each guarded kill leaves the lock unavailable until the killed master is back as a
                // replica: twice the run
                new Scenario<>("Cluster master killed, replication guard",
                        "kept: a hold is handed out only once the replica of its slot's master has it", true, 5_000,
                        ClusterServers::threeShardsGuarded, ClusterServers::killTheLocksMaster,
                        "ClusterServers#killTheLocksMaster").lasting(2),
                new Scenario<>("Cluster slot migration",
                        "kept: scripts answered TRYAGAIN while the slot is split are sent again, holds are renewed "
                                + "through the migration, the client follows ASK and MOVED", true, 2_000,
                        ClusterServers::threeShards, ClusterServers::migrateTheLocksSlot,
                        "ClusterServers#migrateTheLocksSlot"),
                new Scenario<>("Redlock: 1 of 5 nodes killed",
                        "kept: a majority is still up, locking goes on; the node comes back empty after 1–3 s", true,
                        2_000, RedlockNodes::allUp, RedlockNodes::killOneNode, "RedlockNodes#killOneNode")
                        .inQuickRunToo(),
                new Scenario<>("Redlock: 2 of 5 nodes killed",
                        "kept: a majority is still up, locking goes on; the nodes come back empty after 1–3 s", true,
                        2_000, RedlockNodes::allUp, RedlockNodes::killTwoNodes, "RedlockNodes#killTwoNodes"),
                new Scenario<>("Redlock: 3 of 5 restarted empty at once",
                        "broken until the holder's next renewal; fencing (tokens by majority follow the server clocks)"
                                + " refuses the stale write", false, 3_000, RedlockNodes::allUp,
                        RedlockNodes::restartAMajorityAtOnce, "RedlockNodes#restartAMajorityAtOnce"),
                new Scenario<>("Redlock: 3 of 5 restarted empty after the lease",
                        "kept: every holder was told at its deadline before a majority was back", true, 4_000,
                        RedlockNodes::allUp, RedlockNodes::restartAMajorityAfterTheLease,
                        "RedlockNodes#restartAMajorityAfterTheLease"),
                new Scenario<>("Redlock: client cut off from a majority",
                        "kept: the holder is told at its deadline, before a contender can win a majority", true, 3_000,
                        RedlockNodes::proxied, RedlockNodes::cutAWorkerOffFromAMajority,
                        "RedlockNodes#cutAWorkerOffFromAMajority"),
                new Scenario<>("Redlock: 2 of 5 down, 1 of the other 3 restarted empty",
                        "kept: every majority needs both nodes that keep the hold until it is released or its holder"
                                + " told", true, 2_000, RedlockNodes::twoDownForTheRun,
                        RedlockNodes::restartOneOfABareMajority, "RedlockNodes#restartOneOfABareMajority"));
    }
}
