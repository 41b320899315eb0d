package dev.relock.internal.redlock;

import dev.relock.LeaseLostException;
import dev.relock.LeaseState;
import dev.relock.internal.engine.Hold;
import dev.relock.internal.engine.HoldTable;
import dev.relock.internal.engine.IoThreads;
import dev.relock.internal.engine.LockKeys;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Giving up holds on every node: an owner's release (counted by majority), a release nobody waits for, and a forced
 * one. A release is marked on its hold and sent under the dispatch lock ({@link RedlockEngine}), so it reaches each
 * node after any renewal sent before it, and none after it. Thread-safe.
 */
final class MajorityRelease {

    private static final Logger log = LoggerFactory.getLogger(MajorityRelease.class);

    private final NodeSet nodes;
    private final ReleaseCalls calls;
    private final ReentrantLock dispatch;
    // the client's table
    private final HoldTable holds;
    private final LossReports losses;
    private final CleanUps cleanUps;
    private final String clientId;

    MajorityRelease(NodeSet nodes, ReleaseCalls calls, ReentrantLock dispatch, HoldTable holds, LossReports losses,
            CleanUps cleanUps, String clientId) {
        this.nodes = nodes;
        this.calls = calls;
        this.dispatch = dispatch;
        this.holds = holds;
        this.losses = losses;
        this.cleanUps = cleanUps;
        this.clientId = clientId;
    }

    /**
     * Gives up one hold; when it is the owner's last and {@code delayMillis} is positive, the lock
     * stays taken on the nodes for that long (the lease keeper no longer extends it).
     */
    void release(Hold hold, long delayMillis) {
        if (hold.state() == LeaseState.LOST) {
            if (hold.drop() == 0) {
                holds.remove(hold);
                IoThreads.offIo(nodes.timer(), () -> cleanUps.lost(hold));
            }
            throw new LeaseLostException(hold.lockName, hold.lostReason());
        }
        if (hold.holds() > 1) {
            // re-entries are counted here only
            hold.drop();
            return;
        }
        Poll<Long> poll = IoThreads.offIo(nodes.timer(), () -> send(hold, delayMillis));
        holds.remove(hold);
        hold.drop();
        poll.awaitDecision(nodes.timeoutNanos());
        if (poll.won()) {
            hold.released();
            log.debug("Redlock lock '{}' released by {}", hold.lockName, hold.owner);
            return;
        }
        if (poll.no() > nodes.size() - nodes.majority()) {
            losses.report(hold, "a majority of the nodes no longer had it at release (lease ran out, key lost or"
                    + " forced open)");
            throw new LeaseLostException(hold.lockName, hold.lostReason());
        }
        hold.released();
        throw nodes.unavailable("release", hold.lockName, poll);
    }

    /** Gives up a hold nobody will see (an asynchronous acquisition given up), without waiting: from any thread. */
    void releaseUnseen(Hold hold) {
        IoThreads.offIo(nodes.timer(), () -> send(hold));
        holds.remove(hold);
        hold.released();
    }

    /** Marks the hold releasing and sends its release to every node, after any renewal already sent. */
    Poll<Long> send(Hold hold) {
        return send(hold, 0);
    }

    /** As {@link #send(Hold)}; with a positive delay the hold stays taken that long (release-after.lua). */
    private Poll<Long> send(Hold hold, long delayMillis) {
        dispatch.lock();
        try {
            hold.beginRelease();
            List<CompletableFuture<Long>> replies = new ArrayList<>(nodes.size());
            String[] keys = hold.keys.all();
            String member = RedlockEngine.member(hold);
            // names the attempt that took the hold: a release that runs late or again leaves a later hold alone
            String attempt = Long.toString(hold.attemptId);
            for (RedlockNode node : nodes.all()) {
                // EVAL: in order after every attempt and renewal sent before it
                replies.add(delayMillis > 0
                        ? calls.releaseAfter(node, keys, member, delayMillis, attempt)
                        : calls.release(node, keys, member, attempt));
            }
            return nodes.poll(replies, done -> done == 1);
        } finally {
            dispatch.unlock();
        }
    }

    /** Deletes the lock on every node whoever holds it; whether a majority had it. */
    boolean forceUnlock(String name, LockKeys keys) {
        Poll<Long> poll = calls.forceRelease(nodes, keys);
        poll.awaitAll(nodes.timeoutNanos());
        if (poll.answered() < nodes.majority()) {
            throw nodes.unavailable("force-unlock", name, poll);
        }
        boolean held = poll.won();
        if (held) {
            log.info("lock '{}' was forced open on every Redlock node by client {}", name, clientId);
        }
        return held;
    }
}
