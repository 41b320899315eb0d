package dev.relock.internal.redlock;

import dev.relock.LeaseState;
import dev.relock.internal.engine.Hold;
import dev.relock.internal.lease.LeaseKeeper;
import dev.relock.internal.engine.LockEvents;
import dev.relock.internal.engine.Ticker;
import dev.relock.internal.script.RedlockScripts;
import io.lettuce.core.ScriptOutputType;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a renewal is on Redlock, for the {@link LeaseKeeper}: a batch is one renew.lua call per node,
 * sent to every node at once, and each hold's replies are counted across the nodes: a majority of 1s
 * extends the hold's validity from the send time, and the nodes that had lost the key get it back
 * (restore.lua); so many refusals that a majority can no longer confirm it means the lease is lost now;
 * otherwise (nodes unreachable) the hold keeps its validity and is lost when that ends.
 *
 * <p>Deadlines. A hold's deadline is its validity, {@link Hold#leaseEndNanos()}: the send of the
 * last acquisition or renewal round that a majority confirmed + lease − the client's
 * {@link ClockDrift}, on the client's {@link Ticker} (the drift is taken off the lease start when it is recorded).
 *
 * <p>A renewal round in flight at the deadline may still win a majority: the loss was reported
 * with a release of the hold on every node ({@link LossReports#report}), sent after that
 * renewal and by EVAL, so on each node it runs after it; no renewal of a hold goes out after its
 * loss (checked under the dispatch lock). Nothing is sent again when the late majority is counted:
 * by then the same owner (a thread) may have taken the lock anew, and a release by owner sent
 * then would take that hold away.
 */
final class RedlockRenewal implements LeaseKeeper.Renewal {

    private static final Logger log = LoggerFactory.getLogger(RedlockRenewal.class);

    private final NodeSet nodes;
    private final ReentrantLock dispatch;
    private final ClockDrift drift;
    private final LockEvents events;
    private final LeaseExtensions extensions;
    private final LossReports losses;
    private final IdentityRecords records;
    private final String clientId;
    private final Ticker ticker;

    RedlockRenewal(NodeSet nodes, ReentrantLock dispatch, ClockDrift drift, LockEvents events,
            LeaseExtensions extensions, LossReports losses, IdentityRecords records, String clientId, Ticker ticker) {
        this.nodes = nodes;
        this.dispatch = dispatch;
        this.drift = drift;
        this.events = events;
        this.extensions = extensions;
        this.losses = losses;
        this.records = records;
        this.clientId = clientId;
        this.ticker = ticker;
    }

    /** Any hold fits any batch: every node has every key. */
    @Override
    public int batchOf(Hold hold) {
        return 0;
    }

    @Override
    public long deadlineOf(Hold hold) {
        return hold.leaseEndNanos();
    }

    @Override
    public void deadlinePassed(Hold hold) {
        losses.reportAtDeadline(hold, hold.renewed()
                ? "no majority of nodes confirmed a renewal by its deadline (its lease of " + hold.leaseMillis()
                        + " ms minus " + driftMillis(hold) + " ms of clock drift, from the last confirmed send)"
                : "its explicit lease of " + hold.leaseMillis() + " ms (minus " + driftMillis(hold)
                        + " ms of clock drift) ran out while it was held", this::deadlineOf);
    }

    private long driftMillis(Hold hold) {
        return TimeUnit.NANOSECONDS.toMillis(drift.nanosFor(hold.leaseMillis()));
    }

    @Override
    public void send(List<Hold> due, Executor keeperThread) {
        List<Hold> batch = new ArrayList<>(due.size());
        List<CompletableFuture<List<Long>>> replies;
        long sent;
        // each hold's lease as sent: an extension may raise the hold's own meanwhile
        long[] leases;
        dispatch.lock();
        try {
            for (Hold hold : due) {
                // checked again under the lock: a release sent before this batch, or the clean-up of
                // a loss reported meanwhile, must not be overtaken
                if (hold.state() == LeaseState.HELD && !hold.releasing()) {
                    batch.add(hold);
                }
            }
            if (batch.isEmpty()) {
                return;
            }
            String[] keys = new String[batch.size() * 2];
            String[] args = new String[batch.size() * 2];
            leases = new long[batch.size()];
            for (int i = 0; i < batch.size(); i++) {
                Hold hold = batch.get(i);
                keys[2 * i] = hold.keys.lock();
                keys[2 * i + 1] = hold.keys.leases();
                leases[i] = hold.leaseMillis();
                args[2 * i] = RedlockEngine.member(hold);
                args[2 * i + 1] = Long.toString(leases[i]);
            }
            sent = ticker.nanoTime();
            replies = nodes.sendToEachInOrder(RedlockScripts.RENEW, ScriptOutputType.MULTI, keys, args);
        } finally {
            dispatch.unlock();
        }
        for (int i = 0; i < batch.size(); i++) {
            Hold hold = batch.get(i);
            int index = i;
            List<CompletableFuture<Long>> votes = new ArrayList<>(replies.size());
            replies.forEach(reply -> votes.add(reply.thenApply(codes -> codes.get(index))));
            Poll<Long> poll = nodes.poll(votes, code -> code == 1L);
            long lease = leases[i];
            poll.decided().thenRunAsync(() -> settle(hold, poll, sent, lease), keeperThread);
        }
    }

    /** The votes on a renewal of {@code leaseMillis} sent at {@code sent}. Keeper thread. */
    private void settle(Hold hold, Poll<Long> poll, long sent, long leaseMillis) {
        if (hold.state() == LeaseState.LOST) {
            // confirmed after the deadline: the release sent with the loss follows it on every node
            log.debug("Redlock renewal of lock '{}' decided after its loss was reported (won: {})",
                    hold.lockName, poll.won());
            return;
        }
        if (poll.won()) {
            hold.leaseRenewed(sent - drift.nanosFor(leaseMillis), leaseMillis);
            events.renewals(true, 1);
            for (int node = 0; node < nodes.size(); node++) {
                Long code = poll.answer(node);
                if (code != null && code == 0L) {
                    extensions.restore(hold, node);
                }
            }
        } else if (hold.releasing()) {
            return;
        } else if (poll.no() > nodes.size() - nodes.majority()) {
            events.renewals(false, 1);
            losses.report(hold, "a majority of the nodes no longer had it at renewal (key expired, lost in a"
                    + " restart, deleted or forced open)");
        } else {
            events.renewals(false, 1);
            log.warn("relock Redlock client {}: renewal of lock '{}' reached no majority; retrying in lease/3: {}",
                    clientId, hold.lockName, String.join("; ", poll.failures()));
        }
    }

    @Override
    public void passEnded() {
        records.writeWhole();
    }
}
