package dev.relock.internal.redlock;

import dev.relock.LeaseLostException;
import dev.relock.LeaseState;
import dev.relock.internal.engine.EngineClient;
import dev.relock.internal.engine.Engine;
import dev.relock.internal.engine.Hold;
import dev.relock.internal.engine.IoThreads;
import dev.relock.internal.script.RedlockScripts;
import io.lettuce.core.ScriptOutputType;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What moves a held lock's lease on the nodes outside the lease keeper's batches: a re-entry with a longer explicit
 * lease, an owner's lease extension, and the restore of a node that lost the key after a renewal or extension that a
 * majority confirmed. Each extension or restore is sent under the dispatch lock ({@link RedlockEngine}) only while
 * the hold is held and not being released, so none reaches a node after the hold's release or the clean-up of its
 * loss. Thread-safe; callers wait here for a majority at most the command timeout.
 */
final class LeaseExtensions {

    private static final Logger log = LoggerFactory.getLogger(LeaseExtensions.class);

    private final EngineClient core;
    private final NodeSet nodes;
    private final ReentrantLock dispatch;
    private final ClockDrift drift;
    private final LossReports losses;

    LeaseExtensions(EngineClient core, NodeSet nodes, ReentrantLock dispatch, ClockDrift drift, LossReports losses) {
        this.core = core;
        this.nodes = nodes;
        this.dispatch = dispatch;
        this.drift = drift;
        this.losses = losses;
    }

    /** Re-entries are counted in the JVM only; a longer explicit lease is granted by a majority first. */
    Hold reenter(Hold held, long lease, boolean renewed) {
        if (held.leaseEndedBy(core.ticker().nanoTime())) {
            if (held.state() == LeaseState.HELD) {
                losses.report(held, "its lease (minus clock drift) ran out while it was held");
            }
            throw Engine.lostAtReentry(held);
        }
        long sent = core.ticker().nanoTime();
        long start = sent - drift.nanosFor(lease);
        if (!renewed && start + TimeUnit.MILLISECONDS.toNanos(lease) - held.leaseEndNanos() > 0) {
            // a longer explicit lease than the hold has: a majority must grant it first
            extendAtReentry(held, lease);
            held.reenter(lease, false, start);
        } else {
            // the hold's lease stands: a lease of 0 ending at its end changes nothing
            held.reenter(0, renewed, held.leaseEndNanos());
        }
        return held;
    }

    /** Extends the lease of a held lock on a majority, for a re-entry with a longer explicit lease. */
    private void extendAtReentry(Hold held, long lease) {
        Poll<List<Long>> poll = IoThreads.offIo(nodes.timer(), () -> sendRenew(held, lease));
        poll.awaitDecision(nodes.timeoutNanos());
        if (poll.won()) {
            return;
        }
        if (poll.no() > nodes.size() - nodes.majority()) {
            losses.report(held, "a majority of the nodes no longer had it at re-entry");
            throw Engine.lostAtReentry(held);
        }
        throw nodes.unavailable("re-entry", held.lockName, poll);
    }

    /**
     * renew.lua for the one hold on every node, as a renewal round: a majority of confirmations extends the validity
     * to {@code sent - drift + lease}, a node that had lost the key is given it back, and so many refusals that no
     * majority can confirm it mean the hold is lost. Sent under the dispatch lock, only while the hold is
     * held and not being released, so it never reaches a node after the release or the clean-up of a loss.
     */
    void extendLease(Hold hold, long leaseMillis) {
        if (hold.leaseEndedBy(core.ticker().nanoTime())) {
            // its validity is over: a majority may have let it go, so the lock is lost, unless an extension on
            // another thread has just moved it (checked again under the hold's monitor)
            losses.reportAtDeadline(hold, "its lease (minus clock drift) ran out while it was held",
                    Hold::leaseEndNanos);
        }
        if (hold.state() == LeaseState.LOST) {
            throw new LeaseLostException(hold.lockName, hold.lostReason());
        }
        long[] sent = new long[1];
        Poll<List<Long>> poll = IoThreads.offIo(nodes.timer(), () -> sendWhileHeld(hold, leaseMillis, sent));
        if (poll == null) {
            throw lostOrReleased(hold);
        }
        poll.awaitDecision(nodes.timeoutNanos());
        if (poll.won()) {
            if (!hold.leaseExtended(sent[0] - drift.nanosFor(leaseMillis), leaseMillis)) {
                // lost at its deadline meanwhile: its clean-up follows this extension on every node
                throw lostOrReleased(hold);
            }
            restoreWhereLost(hold, poll);
            return;
        }
        if (poll.no() > nodes.size() - nodes.majority()) {
            if (hold.releasing()) {
                throw Engine.releasedAtExtension(hold);
            }
            losses.report(hold, "a majority of the nodes no longer had it at lease extension (key expired, lost in a"
                    + " restart, deleted or forced open)");
            throw new LeaseLostException(hold.lockName, hold.lostReason());
        }
        throw nodes.unavailable("lease extension", hold.lockName, poll);
    }

    /** The extension's renew.lua, sent under the dispatch lock at {@code sent[0]}; null if the hold is not held. */
    private Poll<List<Long>> sendWhileHeld(Hold hold, long leaseMillis, long[] sent) {
        dispatch.lock();
        try {
            if (hold.state() != LeaseState.HELD || hold.releasing()) {
                return null;
            }
            sent[0] = core.ticker().nanoTime();
            return sendRenew(hold, leaseMillis);
        } finally {
            dispatch.unlock();
        }
    }

    private Poll<List<Long>> sendRenew(Hold hold, long leaseMillis) {
        return nodes.poll(nodes.<List<Long>>sendToEachInOrder(RedlockScripts.RENEW, ScriptOutputType.MULTI,
                new String[] {hold.keys.lock(), hold.keys.leases()}, RedlockEngine.member(hold),
                Long.toString(leaseMillis)), codes -> codes.get(0) == 1L);
    }

    private static RuntimeException lostOrReleased(Hold hold) {
        return hold.state() == LeaseState.LOST ? new LeaseLostException(hold.lockName, hold.lostReason())
                : Engine.releasedAtExtension(hold);
    }

    /** Restores the hold on each node whose answer to the confirmed {@code poll} says it lost the key. */
    private void restoreWhereLost(Hold hold, Poll<List<Long>> poll) {
        // also where the answer comes after the majority's: on the event executors, never an I/O thread
        for (int node = 0; node < nodes.size(); node++) {
            int index = node;
            poll.replies().get(node).thenAcceptAsync(codes -> {
                if (codes.get(0) == 0L) {
                    restore(hold, index);
                }
            }, nodes.timer());
        }
    }

    /**
     * Takes a held lock back on one node that lost it, unless the hold is no longer held: after a
     * renewal or lease extension that a majority confirmed. Renewer thread, or an extending thread
     * (never an I/O thread).
     */
    void restore(Hold hold, int node) {
        dispatch.lock();
        try {
            if (hold.state() != LeaseState.HELD || hold.releasing() || core.isClosed()) {
                return;
            }
            RedlockNode target = nodes.node(node);
            target.<Long>runInOrder(RedlockScripts.RESTORE, ScriptOutputType.INTEGER, hold.keys.all(),
                    RedlockEngine.member(hold), Long.toString(hold.leaseMillis()), Long.toString(hold.fencingToken),
                    Long.toString(hold.attemptId))
                    .whenComplete((restored, error) -> log.debug("Redlock lock '{}' restored on {}: {}",
                            hold.lockName, target.address, error == null ? restored : error.toString()));
        } finally {
            dispatch.unlock();
        }
    }
}
