package dev.relock.internal;

import dev.relock.LeaseState;
import dev.relock.internal.script.LuaScript;
import io.lettuce.core.ScriptOutputType;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The watchdog: one thread per client that keeps every renewed hold's lease alive and tells a
 * holder its lease is lost by the hold's local deadline.
 *
 * <p>Every lease/3 it walks the client's {@link HoldTable}, sends all renewals due in batches of
 * at most {@value #BATCH} holds per script call (the calls are pipelined on the one connection),
 * one batch per Cluster slot since a script may touch one slot only (standalone and Sentinel
 * Redis: every key counts as slot 0, so holds fill batches in table order), and on
 * its own thread reads the replies: a renewed lease is confirmed; a lock Redis no longer has for
 * the owner is lost. When a connection of the client comes back (Lettuce reconnected) it renews
 * at once, not at the next pass, so a short outage does not cost the holds.
 *
 * <p>Deadlines. A hold's lease starts when the request that last set it (acquisition, re-entry or
 * a renewal Redis confirmed) was <em>sent</em>, so Redis, which starts it on arrival, keeps it at
 * least that long. The hold's <em>deadline</em> is that start + lease − {@link #driftNanos drift},
 * on this JVM's clock: at the deadline a hold whose lease no renewal has extended is reported
 * lost, before Redis can let anybody else in. A pass arms a one-shot check for the earliest
 * deadline that falls before the pass after it would look, and {@link #watch} arms one for a new
 * hold whose deadline comes before the next pass (a short explicit lease); checks and passes run on
 * this thread only, so a reply that arrived before a deadline is read before that deadline's check.
 *
 * <p>A renewal in flight at the deadline may still get through: its hold has been reported lost,
 * so the lock is released by owner at once ({@link SingleServerEngine#releaseLost}) rather than
 * left to its lease, and nothing is reported twice ({@link Hold#lose} is once only). Whoever hears
 * of a loss is told through {@link SingleServerEngine#reportLost}, on this thread.
 */
final class LeaseKeeper implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(LeaseKeeper.class);
    static final int BATCH = 500;
    /** The fixed part of the drift: how late this thread may wake on a loaded machine. */
    static final long DRIFT_FIXED_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    private final SingleServerEngine client;
    private final HoldTable holds;
    private final RedisCalls calls;
    private final ScheduledThreadPoolExecutor thread;
    private final long periodNanos;
    // the renewal pass a reconnect asks for
    private final CoalescedRun reconnectPass;
    // the one-shot deadline check between passes
    private final DeadlineAlarm alarm;
    // when the next periodic pass starts at the earliest; keeper thread only
    private long nextPassAt;

    LeaseKeeper(SingleServerEngine client, HoldTable holds, RedisCalls calls, long periodMillis) {
        this.client = client;
        this.holds = holds;
        this.calls = calls;
        this.periodNanos = TimeUnit.MILLISECONDS.toNanos(periodMillis);
        this.thread = KeeperThread.start("relock-lease-keeper", client.core.clientId());
        this.alarm = new DeadlineAlarm(thread, this::checkDeadlines);
        this.reconnectPass = new CoalescedRun(thread, this::renewAll);
        this.nextPassAt = System.nanoTime() + periodNanos;
        thread.scheduleWithFixedDelay(this::renewAll, periodMillis, periodMillis, TimeUnit.MILLISECONDS);
    }

    /**
     * How much of a lease of {@code leaseMillis} this client does not count on: 1 % of it (Redis's
     * clock may run faster than this JVM's; NTP slews clocks by 0.05 % at most, 1 % is Redlock's
     * customary allowance) plus 50 ms (this thread and the holder's listeners may run late: on a
     * 2-core box at a load average of 16 the check ran within 2 ms of its time, at 30 some runs
     * were 110 ms late; 1 % + 2 ms was missed by 1 ms), at most a quarter of the lease, so that a
     * very short explicit lease still counts on three quarters of itself. A stall longer than this
     * is a pause, which only fencing covers (README).
     */
    static long driftNanos(long leaseMillis) {
        long lease = TimeUnit.MILLISECONDS.toNanos(leaseMillis);
        return Math.min(lease / 4, lease / 100 + DRIFT_FIXED_NANOS);
    }

    /** When {@code hold} is reported lost unless a renewal extends it first (System.nanoTime()). */
    static long deadlineOf(Hold hold) {
        return hold.leaseEndNanos() - driftNanos(hold.leaseMillis());
    }

    /** A hold joined the table: arms a check for its deadline if no pass would look in time. Any thread. */
    void watch(Hold hold) {
        long deadline = deadlineOf(hold);
        if (deadline - System.nanoTime() - periodNanos < 0) {
            alarm.arm(deadline);
        }
    }

    /** A connection came back: renew every hold now, on this thread. Any thread (Lettuce's I/O threads). */
    void renewSoon() {
        reconnectPass.ask();
    }

    /** One pass over the table. Runs on the keeper thread only. */
    private void renewAll() {
        try {
            Map<Integer, List<Hold>> batches = new HashMap<>();
            OptionalLong earliest = sweep(System.nanoTime(), hold -> {
                if (hold.renewed()) {
                    int slot = client.slotOf(hold.keys.lock());
                    List<Hold> batch = batches.computeIfAbsent(slot, unused -> new ArrayList<>());
                    batch.add(hold);
                    if (batch.size() == BATCH) {
                        // the reply handler keeps reading the list sent
                        send(batches.remove(slot));
                    }
                }
            });
            batches.values().forEach(this::send);
            // a fixed delay: the next pass starts a period after this one ends, or later
            nextPassAt = System.nanoTime() + periodNanos;
            earliest.ifPresent(this::armIfBeforeNextPass);
        } catch (RuntimeException e) {
            // never let one bad pass end the schedule
            log.error("relock lease keeper pass failed", e);
        }
    }

    /** The one-shot check: reports every hold past its deadline; sends nothing. Keeper thread only. */
    private void checkDeadlines() {
        try {
            sweep(System.nanoTime(), hold -> { }).ifPresent(this::armIfBeforeNextPass);
        } catch (RuntimeException e) {
            log.error("relock lease keeper deadline check failed", e);
        }
    }

    /**
     * Reports every hold held and not being released whose deadline has passed by {@code now}, gives
     * each other one to {@code live}, and returns the earliest deadline among those. Keeper thread only.
     */
    private OptionalLong sweep(long now, Consumer<Hold> live) {
        long earliest = 0;
        boolean any = false;
        for (Hold hold : holds.all()) {
            if (hold.state() != LeaseState.HELD || hold.releasing() || reportIfPastDeadline(hold, now)) {
                continue;
            }
            long deadline = deadlineOf(hold);
            if (!any || deadline - earliest < 0) {
                earliest = deadline;
                any = true;
            }
            live.accept(hold);
        }
        return any ? OptionalLong.of(earliest) : OptionalLong.empty();
    }

    /** Arms a check for {@code deadline} unless the next pass comes before it. Keeper thread only. */
    private void armIfBeforeNextPass(long deadline) {
        if (deadline - nextPassAt < 0) {
            alarm.arm(deadline);
        }
    }

    /** Reports {@code hold} lost if its deadline has passed by {@code now}; returns whether it did. */
    private boolean reportIfPastDeadline(Hold hold, long now) {
        if (now - deadlineOf(hold) < 0) {
            return false;
        }
        client.reportLost(hold, hold.renewed()
                ? "no renewal of its lease of " + hold.leaseMillis() + " ms was confirmed by its deadline (lease minus "
                        + TimeUnit.NANOSECONDS.toMillis(driftNanos(hold.leaseMillis())) + " ms of drift on this client's clock)"
                : "its explicit lease of " + hold.leaseMillis() + " ms ran out while it was held (minus "
                        + TimeUnit.NANOSECONDS.toMillis(driftNanos(hold.leaseMillis())) + " ms of drift)");
        if (hold.mode == LockMode.WRITE && client.core.holds().get(hold.keys, LockMode.READ, hold.owner) != null) {
            // a writer that downgraded: the renewals of its read hold keep the lock's hash, ~writer included,
            // alive, so the write hold would outlive its lease in Redis and keep everyone else out
            client.releaseLost(hold);
        }
        return true;
    }

    private void send(List<Hold> batch) {
        // only the keys each hold has (see renew.lua): a write hold's lock hash; a read hold's or permits' hash and zset
        List<String> keys = new ArrayList<>(batch.size() * 2);
        String[] args = new String[batch.size() * 3];
        for (int i = 0; i < batch.size(); i++) {
            Hold hold = batch.get(i);
            keys.add(hold.keys.lock());
            if (hold.mode != LockMode.WRITE) {
                keys.add(hold.keys.leases());
            }
            args[3 * i] = hold.owner;
            args[3 * i + 1] = Long.toString(hold.leaseMillis());
            args[3 * i + 2] = hold.mode.kind;
        }
        long sent = System.nanoTime();
        calls.<List<Long>>run(LuaScript.RENEW, ScriptOutputType.MULTI, keys.toArray(String[]::new), args)
                .whenCompleteAsync((renewed, error) -> {
                    if (error != null && batch.size() > 1 && RedisCalls.isSlotMigrating(error)) {
                        // one hold whose keys are gone keeps a migrating slot's node from running the batch: each
                        // hold on its own, so those whose keys the node has are renewed
                        batch.forEach(hold -> send(List.of(hold)));
                        return;
                    }
                    if (error != null) {
                        client.events().renewals(false, batch.size());
                        log.warn("relock client {}: renewal of {} lease(s) failed; retrying in lease/3: {}",
                                client.core.clientId(), batch.size(),
                                calls.failure(error, "lease renewal", null).getMessage());
                        return;
                    }
                    for (int i = 0; i < batch.size(); i++) {
                        Hold hold = batch.get(i);
                        if (renewed.get(i) == 1L) {
                            if (hold.state() == LeaseState.LOST) {
                                // in flight at the deadline, through after it: the holder has been told, so
                                // the lock must not stay taken by nobody until this lease ends
                                client.releaseLost(hold);
                            } else {
                                client.events().renewals(true, 1);
                                hold.leaseRenewed(sent);
                            }
                        } else if (!hold.releasing()) {
                            client.events().renewals(false, 1);
                            client.reportLost(hold, "Redis no longer had it at renewal "
                                    + "(key expired, deleted, flushed or forced open)");
                        }
                    }
                }, thread);
    }

    @Override
    public void close() {
        thread.shutdownNow();
    }
}
