package dev.relock.faults;

import dev.relock.testredis.RedisNodes;
import dev.relock.testredis.RedisServer;
import dev.relock.testredis.TcpProxy;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Five independent Redis masters without persistence hold the lock by Redlock (a hold needs 3 of them); every
 * worker reaches every node directly. Its faults kill nodes and bring them back empty, as hosts that lost their
 * memory: {@link RedisServer#restartWithoutData()}.
 *
 * <p>Invariants: the nodes in {@link #faultable} are up between two injections (each fault brings back what it
 * killed before it returns); the others, in a {@link #twoDownForTheRun()} set, stay down from start to close. Which
 * nodes a fault hits comes from {@link Campaign.Run#random()}, so a seed replays it. Used by the campaign's thread
 * only.
 *
 * <p>What the engine does that the claims rest on (relock-core's {@code internal.redlock}): a hold is valid until
 * the send of the last acquisition or renewal a majority confirmed + lease − drift (1 % of the lease + 50 ms:
 * 65 ms for the campaign's 1.5 s), and its holder is told at that deadline after a clean-up sent to every node; a
 * renewal extends the key on every node that still has it, even when no majority confirms; a renewal a majority
 * confirmed puts the key back on the nodes that lost it (restore.lua).
 */
final class RedlockNodes extends LockServers {

    static final int NODES = 5;
    /** The nodes a hold needs. */
    static final int MAJORITY = NODES / 2 + 1;
    /**
     * How far past the lease {@link #restartAMajorityAfterTheLease} keeps its nodes down: beyond the engine's drift
     * allowance (65 ms), room for a lease keeper that wakes late on a loaded machine, as in
     * {@link OneServer#restartEmptyAfterTheLease}.
     */
    private static final long PAST_THE_LEASE_MILLIS = 500;

    private final RedisNodes nodes;
    /** The nodes faults may kill: every node, or the three a {@link #twoDownForTheRun()} set keeps up. */
    private final List<RedisServer> faultable;
    private final String describe;
    private final boolean proxied;
    /** Worker id to its proxies, one a node in the nodes' order, for the workers started so far; closed by {@link #close()}. */
    private final Map<String, List<TcpProxy>> proxies = new LinkedHashMap<>();

    private RedlockNodes(RedisNodes nodes, List<RedisServer> faultable, String describe, boolean proxied) {
        this.nodes = nodes;
        this.faultable = List.copyOf(faultable);
        this.describe = describe;
        this.proxied = proxied;
    }

    private RedlockNodes(RedisNodes nodes, List<RedisServer> faultable, String describe) {
        this(nodes, faultable, describe, false);
    }

    /** Five nodes, all up, each worker reaching each node through a {@link TcpProxy} of its own. */
    static RedlockNodes proxied() {
        RedisNodes nodes = RedisNodes.start(NODES);
        return new RedlockNodes(nodes, nodes.nodes(), NODES + " independent Redis without persistence (Redlock), "
                + "each worker through a TCP proxy of its own to each", true);
    }

    /** Five nodes, all up. */
    static RedlockNodes allUp() {
        RedisNodes nodes = RedisNodes.start(NODES);
        return new RedlockNodes(nodes, nodes.nodes(), NODES + " independent Redis without persistence (Redlock)");
    }

    /**
     * Five nodes of which the last two are killed before the workers start and stay down: every hold is on the
     * same three, the bare majority, which the faults act on.
     */
    static RedlockNodes twoDownForTheRun() {
        RedisNodes nodes = RedisNodes.start(NODES);
        try {
            for (int i = MAJORITY; i < NODES; i++) {
                nodes.node(i).kill();
            }
        } catch (RuntimeException e) {
            nodes.close();
            throw e;
        }
        return new RedlockNodes(nodes, nodes.nodes().subList(0, MAJORITY), NODES
                + " independent Redis without persistence (Redlock), 2 of them down for the whole run");
    }

    @Override
    String lockSpec(String workerId) {
        if (!proxied) {
            return coordinatorSpec();
        }
        List<TcpProxy> own = proxies.computeIfAbsent(workerId,
                id -> nodes.nodes().stream().map(TcpProxy::to).toList());
        return "redlock:" + own.stream().map(TcpProxy::uri).collect(Collectors.joining(","));
    }

    @Override
    String coordinatorSpec() {
        return "redlock:" + String.join(",", nodes.uris());
    }

    /**
     * A black hole between the holder (else any worker) and three of the five nodes, a majority, for longer than the
     * lease. Kept: its renewals reach two nodes only, so it is told at its deadline (the send of the last renewal a
     * majority confirmed + lease − drift) and cleans up; a contender needs a majority of nodes, and the three cut off
     * keep the hold until it expires there, no earlier than that deadline plus the drift.
     */
    String cutAWorkerOffFromAMajority(Campaign.Run run) throws InterruptedException {
        WorkerProcess victim = run.holderOrAnyWorker();
        List<TcpProxy> own = victim == null ? null : proxies.get(victim.id);
        if (own == null) {
            return "";
        }
        List<TcpProxy> shuffled = new ArrayList<>(own);
        Collections.shuffle(shuffled, run.random());
        List<TcpProxy> cut = shuffled.subList(0, MAJORITY);
        cut.forEach(TcpProxy::blackhole);
        try {
            Thread.sleep(Campaign.LEASE.toMillis() + 500); // the fault: cut off for longer than its lease
        } finally {
            cut.forEach(TcpProxy::heal);
        }
        return "black hole between " + victim.id + " and " + MAJORITY + " of " + NODES + " nodes";
    }

    @Override
    String describe() {
        return describe;
    }

    /**
     * One node killed, back empty after 1 to 3 s. Kept: the four others are a majority, and a hold lies on all of
     * them, unless it was granted by exactly three (contenders split the others) and no renewal a majority
     * confirmed has restored it on the rest yet (one comes lease/3 after the grant). Such a hold, if the victim is
     * one of its three, is left on two nodes once the victim is back empty, and a contender could win the other
     * three if the hold were still in its section then, more than a second after the kill; the workers' sections
     * last milliseconds.
     */
    String killOneNode(Campaign.Run run) throws InterruptedException {
        return killAndBringBackEmpty(run, 1);
    }

    /** Two nodes killed, back empty after 1 to 3 s: as {@link #killOneNode}, with three nodes left up. */
    String killTwoNodes(Campaign.Run run) throws InterruptedException {
        return killAndBringBackEmpty(run, 2);
    }

    private String killAndBringBackEmpty(Campaign.Run run, int count) throws InterruptedException {
        List<RedisServer> victims = pick(run, count);
        victims.forEach(RedisServer::kill);
        // the fault: down for 1 to 3 s, so for longer than the 1.5 s lease about half the time
        long downMillis = 1_000 + run.random().nextInt(2_001);
        try {
            Thread.sleep(downMillis);
        } finally {
            victims.forEach(RedisServer::restartWithoutData);
        }
        return "killed " + names(victims) + ", back empty after " + downMillis + " ms";
    }

    /**
     * Three nodes killed and restarted empty at once. Broken: a holder whose key was on those three now has it on
     * two at most, and a contender can win the three empty ones while the holder still counts on its hold, until
     * its next renewal tells it. Fencing tokens by majority follow the nodes' clocks, so the contender's is larger and the
     * stale holder's later write is refused.
     */
    String restartAMajorityAtOnce(Campaign.Run run) {
        List<RedisServer> victims = pick(run, MAJORITY);
        victims.forEach(RedisServer::kill);
        victims.forEach(RedisServer::restartWithoutData);
        return "killed " + names(victims) + ", back empty at once";
    }

    /**
     * Three nodes killed and kept down for longer than the lease, then back empty. Kept: no majority can confirm a
     * renewal while they are down, so every hold's deadline (lease − drift after a send that came before the kill)
     * passes, and its holder is told, before any majority can form again.
     */
    String restartAMajorityAfterTheLease(Campaign.Run run) throws InterruptedException {
        List<RedisServer> victims = pick(run, MAJORITY);
        victims.forEach(RedisServer::kill);
        long downMillis = Campaign.LEASE.toMillis() + PAST_THE_LEASE_MILLIS;
        try {
            Thread.sleep(downMillis); // the fault: down for longer than a lease
        } finally {
            victims.forEach(RedisServer::restartWithoutData);
        }
        return "killed " + names(victims) + ", back empty after " + downMillis + " ms";
    }

    /**
     * With two nodes down for the run, one of the three others killed and restarted empty at once. Kept: every
     * hold lay on exactly those three; the two that keep it are in every majority that can form, and they keep it
     * (the holder's renewals extend it there, though no majority confirms them) until the holder releases it or
     * is told at its deadline, after the clean-up that deletes it. No renewal can restore it on the empty node,
     * which would need a majority of confirmations: the holder cannot keep it past that deadline either.
     */
    String restartOneOfABareMajority(Campaign.Run run) {
        RedisServer victim = pick(run, 1).get(0);
        victim.kill();
        victim.restartWithoutData();
        return "killed " + names(List.of(victim)) + ", back empty at once";
    }

    /** {@code count} distinct nodes of {@link #faultable}, chosen by the run's seeded random. */
    private List<RedisServer> pick(Campaign.Run run, int count) {
        List<RedisServer> shuffled = new ArrayList<>(faultable);
        Collections.shuffle(shuffled, run.random());
        return shuffled.subList(0, count);
    }

    /** The nodes as "n2, n4", by their index in the set. */
    private String names(List<RedisServer> victims) {
        return victims.stream().map(node -> "n" + nodes.nodes().indexOf(node)).collect(Collectors.joining(", "));
    }

    @Override
    public void close() {
        proxies.values().forEach(own -> own.forEach(TcpProxy::close));
        nodes.close();
    }
}
