package dev.relock.internal.engine;

import dev.relock.LeaseLost;
import dev.relock.LeaseState;
import dev.relock.internal.metrics.LockEvents;
import dev.relock.internal.single.SingleServerEngine;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * One owner's hold on one lock in one mode (a writer that downgraded has two), as this client knows it: the fencing token, how many times the
 * owner holds it, the lease, and whether the lease keeper renews it.
 *
 * <p>Threads: the owner changes the hold count; the lease keeper thread confirms leases and may
 * mark the hold lost; any thread reads. State moves only HELD -> RELEASED or HELD -> LOST.
 * {@code leaseStartNanos} is when the request that last set the lease was <em>sent</em>, so the
 * lease as seen here never outlives the one Redis keeps.
 *
 * <p>Footprint: a client may hold 100,000s of these, so a hold is one object: counters and state
 * are fields changed through VarHandles (no Atomic* beside it), the future that tells of a loss is
 * made only when someone asks for it or the loss happens, and the keys and owner are shared
 * (with the lock view, and with the owner's other holds).
 *
 * <p>Public because both engines, the lease keeper and the metrics, each in a package of its own, use it.
 */
public final class Hold {

    private static final VarHandle HOLDS;
    private static final VarHandle STATE;
    private static final VarHandle LOST;
    private static final VarHandle LOST_REASON;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            HOLDS = lookup.findVarHandle(Hold.class, "holds", int.class);
            STATE = lookup.findVarHandle(Hold.class, "state", LeaseState.class);
            LOST = lookup.findVarHandle(Hold.class, "lost", CompletableFuture.class);
            LOST_REASON = lookup.findVarHandle(Hold.class, "lostReason", String.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    public final String lockName;
    public final LockKeys keys;
    public final LockMode mode;
    public final String owner;
    public final long fencingToken;
    /**
     * The id of the attempt that took it, where the engine names attempts (Redlock: acquire.lua's ARGV[5], so a
     * clean-up of this hold never removes a later attempt's); 0 where it does not.
     */
    public final long attemptId;
    // when it was acquired, by System.nanoTime(); heldSinceMillis() tells users the wall-clock time
    final long heldSinceNanos = System.nanoTime();

    private volatile int holds = 1; // HOLDS
    private volatile LeaseState state = LeaseState.HELD; // STATE
    // null until whenLost() or lose() needs it; set once, through LOST
    private volatile CompletableFuture<LeaseLost> lost;
    // why the lease was lost: set once, by the lose() that then sets LOST, before it does, so whoever sees LOST
    // sees it; a lose() that finds it set has lost the race and leaves the state alone
    private volatile String lostReason;
    private volatile boolean renewed;
    private volatile long leaseMillis;
    private volatile long leaseStartNanos;
    // set before the release of the last hold is sent: a renewal that fails after it is no loss
    private volatile boolean releasing;
    // whether the owner-checked release of this hold after its loss went out (at most once);
    // guarded by this (SingleServerEngine.releaseLost)
    private boolean lostReleaseSent;
    // told when the hold ends; set once, by the acquiring thread, just after acquisition
    private volatile LockEvents.HoldSpan span = LockEvents.NO_SPAN;

    public Hold(String lockName, LockKeys keys, LockMode mode, String owner, long fencingToken,
            long leaseMillis, boolean renewed, long leaseStartNanos) {
        this(lockName, keys, mode, owner, fencingToken, 0, leaseMillis, renewed, leaseStartNanos);
    }

    public Hold(String lockName, LockKeys keys, LockMode mode, String owner, long fencingToken, long attemptId,
            long leaseMillis, boolean renewed, long leaseStartNanos) {
        this.lockName = lockName;
        this.attemptId = attemptId;
        this.keys = keys;
        this.mode = mode;
        this.owner = owner;
        this.fencingToken = fencingToken;
        this.leaseMillis = leaseMillis;
        this.renewed = renewed;
        this.leaseStartNanos = leaseStartNanos;
    }

    public int holds() {
        return holds;
    }

    /** Another hold by the same owner; Redis has already extended the lease to at least leaseMillis. */
    public void reenter(long leaseMillis, boolean renew, long sentNanos) {
        HOLDS.getAndAdd(this, 1);
        if (renew) {
            renewed = true;
        }
        if (sentNanos + TimeUnit.MILLISECONDS.toNanos(leaseMillis) - leaseEndNanos() > 0) {
            this.leaseMillis = leaseMillis;
            this.leaseStartNanos = sentNanos;
        }
    }

    /** Gives up one hold locally; returns how many are left. */
    public int drop() {
        int n;
        do {
            n = holds;
        } while (n > 0 && !HOLDS.compareAndSet(this, n, n - 1));
        return Math.max(0, n - 1);
    }

    public boolean renewed() {
        return renewed;
    }

    public long leaseMillis() {
        return leaseMillis;
    }

    /** Redis confirmed a renewal of leaseMillis sent at sentNanos. Lease keeper thread. */
    public void leaseRenewed(long sentNanos) {
        if (sentNanos - leaseStartNanos > 0) {
            leaseStartNanos = sentNanos;
        }
    }

    public long leaseEndNanos() {
        return leaseStartNanos + TimeUnit.MILLISECONDS.toNanos(leaseMillis);
    }

    public boolean leaseEndedBy(long nowNanos) {
        return nowNanos - leaseEndNanos() >= 0;
    }

    public LeaseState state() {
        return state;
    }

    public void beginRelease() {
        releasing = true;
    }

    public boolean releasing() {
        return releasing;
    }

    public void released() {
        if (STATE.compareAndSet(this, LeaseState.HELD, LeaseState.RELEASED)) {
            span.ended(this, false);
        }
    }

    /** From now on {@code span} hears when this hold ends (at once if it has ended already). */
    public void observedBy(LockEvents.HoldSpan span) {
        this.span = span;
        // a loss on the lease keeper thread may have come first and told the old span; the span
        // ignores a second end
        LeaseState now = state();
        if (now != LeaseState.HELD) {
            span.ended(this, now == LeaseState.LOST);
        }
    }

    /**
     * When it was acquired, by the wall clock as it reads now: now less how long it has been held
     * (one clock reading kept per hold, not two).
     */
    public long heldSinceMillis() {
        return System.currentTimeMillis() - heldMillis();
    }

    public long heldMillis() {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - heldSinceNanos);
    }

    /**
     * Marks the lease lost and completes {@link #whenLost()}; returns false, and tells nobody, if the lease was
     * already lost or released.
     */
    public boolean lose(String reason) {
        // of two lose() calls at once, only the one that set the reason may set LOST, so the reason stays the one
        // that is reported
        if (state != LeaseState.HELD || !LOST_REASON.compareAndSet(this, (String) null, reason)
                || !STATE.compareAndSet(this, LeaseState.HELD, LeaseState.LOST)) {
            return false;
        }
        whenLost().complete(new LeaseLost(lockName, fencingToken, reason));
        span.ended(this, true);
        return true;
    }

    /** True the first time only: the caller sends the release of this lost hold. Caller holds this monitor. */
    public boolean firstLostRelease() {
        if (lostReleaseSent) {
            return false;
        }
        lostReleaseSent = true;
        return true;
    }

    /** Why the lease was lost, or null while it is not. */
    public String lostReason() {
        return state == LeaseState.LOST ? lostReason : null;
    }

    @SuppressWarnings("unchecked")
    public CompletableFuture<LeaseLost> whenLost() {
        CompletableFuture<LeaseLost> lost = this.lost;
        if (lost == null) {
            CompletableFuture<LeaseLost> made = new CompletableFuture<>();
            Object earlier = LOST.compareAndExchange(this, null, made);
            lost = earlier == null ? made : (CompletableFuture<LeaseLost>) earlier;
        }
        return lost;
    }
}
