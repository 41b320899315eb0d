package dev.relock.internal.single;

import dev.relock.LeaseState;
import dev.relock.internal.engine.EngineClient;
import dev.relock.internal.engine.Hold;
import dev.relock.internal.engine.LockMode;
import dev.relock.internal.lease.LeaseKeeper;
import dev.relock.internal.engine.LockEvents;
import dev.relock.internal.redis.RedisCalls;
import dev.relock.internal.redis.RedisFailures;
import dev.relock.internal.script.SingleServerScripts;
import io.lettuce.core.ScriptOutputType;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a renewal is on one Redis, for the {@link LeaseKeeper}: a batch is one renew.lua call (the
 * calls of a pass are pipelined on the client's one connection), one per Cluster slot; a reply of 1
 * for a hold confirms its lease from the send time, 0 means Redis no longer has it for the owner: lost;
 * 2 means its owner gave it up with a delay ({@link #GIVEN_UP}), which is no loss while the hold is being released.
 *
 * <p>Deadlines. A hold's lease starts when the request that last set it (acquisition, re-entry or
 * a renewal Redis confirmed) was <em>sent</em>, so Redis, which starts it on arrival, keeps it at
 * least that long. The hold's deadline is that start + lease − {@link #driftNanos drift}, on this
 * JVM's clock: at the deadline a hold whose lease no renewal has extended is reported lost, before
 * Redis can let anybody else in.
 *
 * <p>An extension ({@link HoldExtensions#extendLease}) is the same script for one hold, sent by
 * its caller. Renewals and extensions only ever lengthen a lease, so their replies may be counted
 * in any order: each confirms the lease it asked for, from its own send ({@link Hold#leaseRenewed}).
 *
 * <p>A renewal in flight at the deadline may still get through: its hold has been reported lost,
 * so the lock is released by owner at once ({@link Releases#releaseLost}) rather than
 * left to its lease, and nothing is reported twice ({@link Hold#lose} is once only). Whoever hears
 * of a loss is told through {@link LossReports#reportLost}, on the keeper thread.
 */
final class SingleServerRenewal implements LeaseKeeper.Renewal {

    private static final Logger log = LoggerFactory.getLogger(SingleServerRenewal.class);
    /** The fixed part of the drift: how late the keeper thread may wake on a loaded machine. */
    static final long DRIFT_FIXED_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
    /** renew.lua's answer for a hold it lengthened. */
    static final long RENEWED = 1;
    /**
     * renew.lua's answer for a hold its owner gave up with a delay (release-after.lua marked it), left to end then:
     * a renewal or extension sent before that release and run after it, over another connection (a replication
     * guard's releases take the guard's), must not lengthen the lease the release cut.
     */
    static final long GIVEN_UP = 2;

    private final EngineClient core;
    // the shared command connection's calls
    private final RedisCalls calls;
    private final Routes routes;
    // their dispatch lock orders a renewal batch and a release on the connection
    private final Releases releases;
    private final LossReports losses;
    // written whole after each pass
    private final IdentityRecord ownRecord;
    private final LockEvents events;

    SingleServerRenewal(EngineClient core, RedisCalls calls, Routes routes, Releases releases, LossReports losses,
            IdentityRecord ownRecord, LockEvents events) {
        this.core = core;
        this.calls = calls;
        this.routes = routes;
        this.releases = releases;
        this.losses = losses;
        this.ownRecord = ownRecord;
        this.events = events;
    }

    /**
     * How much of a lease of {@code leaseMillis} this client does not count on: 1 % of it (Redis's
     * clock may run faster than this JVM's; NTP slews clocks by 0.05 % at most, 1 % is Redlock's
     * customary allowance) plus 50 ms (the keeper thread and the holder's listeners may run late on a loaded
     * machine), at most a quarter of the lease, so that a
     * very short explicit lease still counts on three quarters of itself. A stall longer than this
     * is a pause, which only fencing covers (docs/guarantees.md). The same allowance as a Redlock client's
     * default {@code ClockDrift}, which has no cap because Redlock refuses leases it would consume.
     */
    static long driftNanos(long leaseMillis) {
        long lease = TimeUnit.MILLISECONDS.toNanos(leaseMillis);
        return Math.min(lease / 4, lease / 100 + DRIFT_FIXED_NANOS);
    }

    @Override
    public int batchOf(Hold hold) {
        return routes.slotOf(hold.keys.lock());
    }

    @Override
    public long deadlineOf(Hold hold) {
        return deadline(hold.leaseEndNanos(), hold.leaseMillis());
    }

    /**
     * When this client counts a lease of {@code leaseMillis} that ends at {@code leaseEndNanos} (a reading of its
     * ticker) as ended: {@link #deadlineOf} for a hold not made yet. Any thread.
     */
    static long deadline(long leaseEndNanos, long leaseMillis) {
        return leaseEndNanos - driftNanos(leaseMillis);
    }

    @Override
    public void deadlinePassed(Hold hold) {
        long driftMillis = TimeUnit.NANOSECONDS.toMillis(driftNanos(hold.leaseMillis()));
        String reason = hold.renewed()
                ? "no renewal of its lease of " + hold.leaseMillis() + " ms was confirmed by its deadline (lease minus "
                        + driftMillis + " ms of drift on this client's clock)"
                : "its explicit lease of " + hold.leaseMillis() + " ms ran out while it was held (minus "
                        + driftMillis + " ms of drift)";
        if (!losses.reportLostAtDeadline(hold, reason, this::deadlineOf)) {
            // an extension confirmed since the keeper looked moved the deadline
            return;
        }
        if (hold.mode == LockMode.WRITE && core.holds().get(hold.keys, LockMode.READ, hold.owner) != null) {
            // a writer that downgraded: the renewals of its read hold keep the lock's hash, ~writer included,
            // alive, so the write hold would outlive its lease in Redis and keep everyone else out
            releases.releaseLost(hold);
        }
    }

    @Override
    public void send(List<Hold> due, Executor keeperThread) {
        // a hold whose release began since the keeper looked is not renewed: under the engine's dispatch lock, so a
        // release either follows this batch or was counted here (see Releases.release); on the connection
        // when both share it, else renew.lua answers GIVEN_UP to a renewal that reaches Redis after a release-after
        releases.dispatch.lock();
        try {
            List<Hold> batch = new ArrayList<>(due.size());
            for (Hold hold : due) {
                if (!hold.releasing()) {
                    batch.add(hold);
                }
            }
            if (!batch.isEmpty()) {
                sendNow(batch, keeperThread);
            }
        } finally {
            releases.dispatch.unlock();
        }
    }

    private void sendNow(List<Hold> batch, Executor keeperThread) {
        // only the keys each hold has (see renew.lua): a write hold's lock hash; a read hold's or permits' hash and zset
        List<String> keys = new ArrayList<>(batch.size() * 2);
        String[] args = new String[batch.size() * 3];
        // each hold's lease as sent: an extension may raise the hold's own meanwhile
        long[] leases = new long[batch.size()];
        for (int i = 0; i < batch.size(); i++) {
            Hold hold = batch.get(i);
            keys.add(hold.keys.lock());
            if (hold.mode != LockMode.WRITE) {
                keys.add(hold.keys.leases());
            }
            leases[i] = hold.leaseMillis();
            args[3 * i] = hold.owner;
            args[3 * i + 1] = Long.toString(leases[i]);
            args[3 * i + 2] = ModeScripts.of(hold.mode).kind;
        }
        long sent = core.ticker().nanoTime();
        calls.<List<Long>>run(SingleServerScripts.RENEW, ScriptOutputType.MULTI, keys.toArray(String[]::new), args)
                .whenCompleteAsync((renewed, error) -> {
                    if (error != null && batch.size() > 1 && RedisFailures.isSlotMigrating(error)) {
                        // one hold whose keys are gone keeps a migrating slot's node from running the batch: each
                        // hold on its own, so those whose keys the node has are renewed
                        batch.forEach(hold -> send(List.of(hold), keeperThread));
                        return;
                    }
                    if (error != null) {
                        events.renewals(false, batch.size());
                        log.warn("relock client {}: renewal of {} lease(s) failed; retrying in lease/3: {}",
                                core.clientId(), batch.size(),
                                calls.failure(error, "lease renewal", null).getMessage());
                        return;
                    }
                    for (int i = 0; i < batch.size(); i++) {
                        settle(batch.get(i), renewed.get(i), sent, leases[i]);
                    }
                }, keeperThread);
    }

    /** One hold's answer from renew.lua, to a renewal of {@code leaseMillis} sent at {@code sent}. Keeper thread. */
    private void settle(Hold hold, long answer, long sent, long leaseMillis) {
        if (answer == RENEWED) {
            if (hold.state() == LeaseState.LOST) {
                // in flight at the deadline, through after it: the holder has been told, so
                // the lock must not stay taken by nobody until this lease ends
                releases.releaseLost(hold);
            } else {
                events.renewals(true, 1);
                hold.leaseRenewed(sent, leaseMillis);
            }
        } else if (!hold.releasing()) {
            events.renewals(false, 1);
            losses.reportLost(hold, notRenewed(answer, "renewal"));
        }
    }

    /**
     * Why a hold that is not being released was not renewed, by renew.lua's {@code answer} (not {@link #RENEWED}) to
     * a renewal or extension ({@code at}). {@link #GIVEN_UP} for such a hold: a release-after of the owner's earlier
     * hold of the lock reached Redis after the acquisition of this one (over another connection) and cut it.
     */
    static String notRenewed(long answer, String at) {
        return answer == GIVEN_UP
                ? "Redis had it given up with a delay at " + at + " (a releaseAfter of its owner's earlier hold of the"
                        + " lock reached Redis after this hold's acquisition): it ends with that delay"
                : "Redis no longer had it at " + at + " (key expired, deleted, flushed or forced open)";
    }

    @Override
    public void passEnded() {
        ownRecord.writeWhole();
    }
}
