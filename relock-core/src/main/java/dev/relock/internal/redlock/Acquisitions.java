package dev.relock.internal.redlock;

import dev.relock.internal.engine.EngineClient;
import dev.relock.internal.engine.Hold;
import dev.relock.internal.engine.LockKeys;
import dev.relock.internal.engine.LockMode;
import dev.relock.internal.lease.LeaseKeeper;
import dev.relock.internal.engine.LockEvents;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The fresh acquisitions of one client and what they share: they are made here, get their attempt ids here, are known
 * here while under way (close() fails them), and hand a won hold here to the hold table, the lease keeper and the
 * identity record. Each {@link RedlockAcquisition} runs over this, as Curator's lock recipes run over their
 * internals. Thread-safe.
 */
final class Acquisitions {

    private final EngineClient core;
    private final NodeSet nodes;
    private final ReleaseSignals signals;
    private final CleanUps cleanUps;
    private final ClockDrift drift;
    private final LockEvents events;
    private final ReleaseCalls releaseCalls;
    private final MajorityRelease releases;
    private final IdentityRecords records;
    private final LeaseKeeper leaseKeeper;
    private final AttemptCalls attemptCalls;
    private final AtomicLong attemptIds = new AtomicLong();
    // fresh acquisitions under way, failed by close()
    private final Set<RedlockAcquisition> underWay = ConcurrentHashMap.newKeySet();

    Acquisitions(EngineClient core, NodeSet nodes, ReleaseSignals signals, CleanUps cleanUps, ClockDrift drift,
            LockEvents events, ReleaseCalls releaseCalls, MajorityRelease releases, IdentityRecords records,
            LeaseKeeper leaseKeeper) {
        this.core = core;
        this.nodes = nodes;
        this.signals = signals;
        this.cleanUps = cleanUps;
        this.drift = drift;
        this.events = events;
        this.releaseCalls = releaseCalls;
        this.releases = releases;
        this.records = records;
        this.leaseKeeper = leaseKeeper;
        this.attemptCalls = new AttemptCalls(nodes);
    }

    /** A fresh acquisition, not started (see {@link dev.relock.internal.engine.Engine#acquisition}). */
    RedlockAcquisition create(String name, LockKeys keys, LockMode mode, String owner, long leaseMillis,
            boolean renewed) {
        return new RedlockAcquisition(this, name, keys, mode, owner, leaseMillis, renewed);
    }

    /** Fails every acquisition under way; each cleans up an attempt in flight on every node. */
    void failAll(IllegalStateException closed) {
        underWay.forEach(acquisition -> acquisition.failAtClose(closed));
    }

    void started(RedlockAcquisition acquisition) {
        underWay.add(acquisition);
    }

    void ended(RedlockAcquisition acquisition) {
        underWay.remove(acquisition);
    }

    /** A new attempt id, unique in this client: see acquire.lua's ARGV[5]. */
    String nextAttemptId() {
        return Long.toString(attemptIds.incrementAndGet());
    }

    /** A new hold joins the table, and the lease keeper watches its deadline. */
    void track(Hold hold) {
        core.holds().add(hold);
        leaseKeeper.watch(hold);
    }

    /** {@code hold}, just handed out, has its owner's thread named in the identity record soon. */
    void nameHolder(Hold hold) {
        records.nameHolder(hold);
    }

    /** Gives up a hold nobody will see (an asynchronous acquisition given up), without waiting: from any thread. */
    void releaseUnseen(Hold hold) {
        releases.releaseUnseen(hold);
    }

    /** How long a release keeps the lock for the first waiting writer: see release.lua. */
    long turnNanos() {
        return releaseCalls.turnNanos();
    }

    EngineClient core() {
        return core;
    }

    NodeSet nodes() {
        return nodes;
    }

    AttemptCalls attemptCalls() {
        return attemptCalls;
    }

    ReleaseSignals signals() {
        return signals;
    }

    CleanUps cleanUps() {
        return cleanUps;
    }

    ClockDrift drift() {
        return drift;
    }

    LockEvents events() {
        return events;
    }
}
