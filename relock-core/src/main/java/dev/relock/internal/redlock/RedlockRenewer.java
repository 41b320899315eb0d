package dev.relock.internal.redlock;

import dev.relock.LeaseState;
import dev.relock.internal.CoalescedRun;
import dev.relock.internal.DeadlineAlarm;
import dev.relock.internal.Hold;
import dev.relock.internal.KeeperThread;
import io.lettuce.core.ScriptOutputType;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The lease keeper of a Redlock client: one thread that keeps every renewed hold's lease alive on
 * a majority of nodes and tells a holder its lease is lost by the hold's deadline.
 *
 * <p>Every lease/3 it sends all renewals due in batches of {@value #BATCH} holds, one renew.lua
 * call per node per batch, to every node at once, and counts each hold's replies across the
 * nodes: a majority of 1s extends the hold's validity from the send time, and the nodes that had
 * lost the key get it back (restore.lua); so many refusals that a majority can no longer confirm
 * it means the lease is lost now; otherwise (nodes unreachable) the
 * hold keeps its validity and is lost when that ends. Explicit leases are not renewed and are
 * lost when their validity ends while still held. When a connection to a node comes back (Lettuce
 * reconnected) it renews at once, not at the next pass.
 *
 * <p>Deadlines. A hold's deadline is its validity, {@link Hold#leaseEndNanos()}: the send of the
 * last acquisition or renewal round that a majority confirmed + lease − the client's
 * {@link ClockDrift}, on this JVM's clock. A pass arms a one-shot check ({@link DeadlineAlarm})
 * for the earliest deadline that falls before the pass after it would look, and {@link #watch}
 * arms one for a new hold whose deadline comes before the next pass; the check reports every hold
 * past its deadline lost, before a majority of nodes can let anybody else in. Checks, passes and
 * the handling of renewal replies run on this thread only, so a majority confirmed before a
 * deadline is counted before that deadline's check.
 *
 * <p>A renewal round in flight at the deadline may still win a majority: the loss was reported
 * with a release of the hold on every node ({@link RedlockEngine#reportLost}), sent after that
 * renewal and by EVAL, so on each node it runs after it; no renewal of a hold goes out after its
 * loss (checked under the dispatch lock). Nothing is sent again when the late majority is counted:
 * by then the same owner (a thread) may have taken the lock anew, and a release by owner sent
 * then would take that hold away.
 *
 * <p>Why not {@code dev.relock.internal.LeaseKeeper}: it renews over one connection and reads one
 * reply per hold; a Redlock renewal is a vote of N nodes per hold.
 */
final class RedlockRenewer implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(RedlockRenewer.class);
    static final int BATCH = 500;

    private final RedlockEngine client;
    private final ScheduledThreadPoolExecutor thread;
    private final long periodNanos;
    // the one-shot deadline check between passes
    private final DeadlineAlarm alarm;
    // when the next periodic pass starts at the earliest; renewer thread only
    private long nextPassAt;
    // the renewal pass a reconnect asks for
    private final CoalescedRun reconnectPass;

    RedlockRenewer(RedlockEngine client, long periodMillis) {
        this.client = client;
        this.periodNanos = TimeUnit.MILLISECONDS.toNanos(periodMillis);
        this.thread = KeeperThread.start("relock-redlock-renewer", client.core.clientId());
        this.alarm = new DeadlineAlarm(thread, this::checkDeadlines);
        this.reconnectPass = new CoalescedRun(thread, this::renewAll);
        this.nextPassAt = System.nanoTime() + periodNanos;
        thread.scheduleWithFixedDelay(this::renewAll, periodMillis, periodMillis, TimeUnit.MILLISECONDS);
    }

    /** A hold joined the table: arms a check for its deadline if no pass would look in time. Any thread. */
    void watch(Hold hold) {
        long deadline = hold.leaseEndNanos();
        if (deadline - System.nanoTime() - periodNanos < 0) {
            alarm.arm(deadline);
        }
    }

    /**
     * A connection to a node came back: renew every hold now, on this thread, not at the next pass
     * (the outage used up part of every validity, and the node may have lost keys to restore).
     * Any thread (Lettuce's I/O threads).
     */
    void renewSoon() {
        reconnectPass.ask();
    }

    /** One pass over the client's holds. Renewer thread only. */
    private void renewAll() {
        try {
            List<List<Hold>> batches = new ArrayList<>();
            batches.add(new ArrayList<>());
            OptionalLong earliest = sweep(System.nanoTime(), hold -> {
                if (hold.renewed()) {
                    List<Hold> batch = batches.get(batches.size() - 1);
                    batch.add(hold);
                    if (batch.size() == BATCH) {
                        batches.add(new ArrayList<>());
                    }
                }
            });
            batches.stream().filter(batch -> !batch.isEmpty()).forEach(this::send);
            // a fixed delay: the next pass starts a period after this one ends, or later
            nextPassAt = System.nanoTime() + periodNanos;
            earliest.ifPresent(this::armIfBeforeNextPass);
        } catch (RuntimeException e) {
            // never let one bad pass end the schedule
            log.error("relock Redlock renewer pass failed", e);
        }
    }

    /** The one-shot check: reports every hold past its deadline; sends nothing. Renewer thread only. */
    private void checkDeadlines() {
        try {
            sweep(System.nanoTime(), hold -> { }).ifPresent(this::armIfBeforeNextPass);
        } catch (RuntimeException e) {
            log.error("relock Redlock renewer deadline check failed", e);
        }
    }

    /**
     * Reports every hold held and not being released whose deadline has passed by {@code now}, gives
     * each other one to {@code live}, and returns the earliest deadline among those. Renewer thread only.
     */
    private OptionalLong sweep(long now, Consumer<Hold> live) {
        OptionalLong earliest = OptionalLong.empty();
        for (Hold hold : client.core.holds().all()) {
            if (hold.state() != LeaseState.HELD || hold.releasing()) {
                continue;
            }
            if (hold.leaseEndedBy(now)) {
                client.reportLost(hold, hold.renewed()
                        ? "no majority of nodes confirmed a renewal by its deadline (its lease of " + hold.leaseMillis()
                                + " ms minus " + driftMillis(hold) + " ms of clock drift, from the last confirmed send)"
                        : "its explicit lease of " + hold.leaseMillis() + " ms (minus " + driftMillis(hold)
                                + " ms of clock drift) ran out while it was held");
                continue;
            }
            long deadline = hold.leaseEndNanos();
            if (earliest.isEmpty() || deadline - earliest.getAsLong() < 0) {
                earliest = OptionalLong.of(deadline);
            }
            live.accept(hold);
        }
        return earliest;
    }

    private long driftMillis(Hold hold) {
        return TimeUnit.NANOSECONDS.toMillis(client.drift().nanosFor(hold.leaseMillis()));
    }

    /** Arms a check for {@code deadline} unless the next pass comes before it. Renewer thread only. */
    private void armIfBeforeNextPass(long deadline) {
        if (deadline - nextPassAt < 0) {
            alarm.arm(deadline);
        }
    }

    private void send(List<Hold> due) {
        List<Hold> batch = new ArrayList<>(due.size());
        List<CompletableFuture<List<Long>>> replies;
        long sent;
        client.dispatch().lock();
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
            for (int i = 0; i < batch.size(); i++) {
                Hold hold = batch.get(i);
                keys[2 * i] = hold.keys.lock();
                keys[2 * i + 1] = hold.keys.leases();
                args[2 * i] = RedlockEngine.member(hold);
                args[2 * i + 1] = Long.toString(hold.leaseMillis());
            }
            sent = System.nanoTime();
            replies = client.sendToEachInOrder(RedlockEngine.RENEW, ScriptOutputType.MULTI, keys, args);
        } finally {
            client.dispatch().unlock();
        }
        for (int i = 0; i < batch.size(); i++) {
            Hold hold = batch.get(i);
            int index = i;
            List<CompletableFuture<Long>> votes = new ArrayList<>(replies.size());
            replies.forEach(reply -> votes.add(reply.thenApply(codes -> codes.get(index))));
            Poll<Long> poll = client.poll(votes, code -> code == 1L);
            poll.decided().thenRunAsync(() -> settle(hold, poll, sent), thread);
        }
    }

    /** Renewer thread. */
    private void settle(Hold hold, Poll<Long> poll, long sent) {
        if (hold.state() == LeaseState.LOST) {
            // confirmed after the deadline: the release sent with the loss follows it on every node
            log.debug("Redlock renewal of lock '{}' decided after its loss was reported (won: {})",
                    hold.lockName, poll.won());
            return;
        }
        if (poll.won()) {
            hold.leaseRenewed(sent - client.drift().nanosFor(hold.leaseMillis()));
            client.events().renewals(true, 1);
            for (int node = 0; node < client.nodeCount(); node++) {
                Long code = poll.answer(node);
                if (code != null && code == 0L) {
                    client.restore(hold, node);
                }
            }
        } else if (hold.releasing()) {
            return;
        } else if (poll.no() > client.nodeCount() - client.majority()) {
            client.events().renewals(false, 1);
            client.reportLost(hold, "a majority of the nodes no longer had it at renewal (key expired, lost in a"
                    + " restart, deleted or forced open)");
        } else {
            client.events().renewals(false, 1);
            log.warn("relock Redlock client {}: renewal of lock '{}' reached no majority; retrying in lease/3: {}",
                    client.core.clientId(), hold.lockName, String.join("; ", poll.failures()));
        }
    }

    @Override
    public void close() {
        thread.shutdownNow();
    }
}
