package dev.relock.internal.engine;

import dev.relock.LeaseLost;
import dev.relock.LeaseState;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.ToLongFunction;

/**
 * One owner's hold on one lock in one mode (a writer that downgraded has two), as this client knows it: the fencing token, how many times the
 * owner holds it, the lease, and whether the lease keeper renews it.
 *
 * <p>Threads: the owner changes the hold count; the lease keeper thread confirms leases and may
 * mark the hold lost; any thread reads. State moves only HELD -> RELEASED or HELD -> LOST.
 *
 * <p>The lease. {@code leaseStartNanos + leaseMillis} is when the lease ends by this client's count: the send time
 * of a request that Redis confirmed, plus the lease it asked for (Redis starts it on arrival, so the end here never
 * comes after Redis's). Every request that sets a lease (acquisition, re-entry, renewal, {@code extendLease}) only
 * ever lengthens it in Redis, so the end here is the latest end any confirmed request proves, and confirmations may
 * be counted in any order. {@code leaseMillis} never decreases either: it is what renewals ask for, and what the
 * engines take their drift allowance from; where the end was proved by a shorter lease, the start is set back so
 * the pair still gives that end (a larger drift, so an earlier deadline: the safe side). The pair changes only
 * under this hold's monitor, the start written before the lease, and readers read the lease first: a reader that
 * catches a change half done sees a new start with an old, never larger, lease, so an end no later than the true
 * one. The same monitor orders a confirmed lease change against a loss at the deadline ({@link #loseAtDeadline}),
 * so an extension counted in time keeps the hold, and one counted after finds it lost. Lease changes under the
 * monitor never send or block (the single-server engine also sends a lost hold's release under it, once).
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
    // when it joined the client's table (HoldTable.add, once, before the table publishes it), by the client's ticker;
    // heldSinceMillis() tells users the wall-clock time
    private volatile long heldSinceNanos;

    private volatile int holds = 1; // HOLDS
    private volatile LeaseState state = LeaseState.HELD; // STATE
    // null until whenLost() or lose() needs it; set once, through LOST
    private volatile CompletableFuture<LeaseLost> lost;
    // why the lease was lost: set once, by the lose() that then sets LOST, before it does, so whoever sees LOST
    // sees it; a lose() that finds it set has lost the race and leaves the state alone
    private volatile String lostReason;
    private volatile boolean renewed;
    // the lease pair: written under this monitor, the start first; read the lease first (see the class comment)
    private volatile long leaseMillis;
    private volatile long leaseStartNanos;
    // set before the release of the last hold is sent: a renewal that fails after it is no loss
    private volatile boolean releasing;
    // whether the owner-checked release of this hold after its loss went out (at most once);
    // guarded by this (the single-server engine's Releases.releaseLost)
    private boolean lostReleaseSent;
    // told when the hold ends; set once, by the acquiring thread, just after acquisition
    private volatile LockEvents.HoldSpan span = LockEvents.NO_SPAN;
    // the name of the thread that asked for the hold (for a handle: the thread that started the acquisition); set
    // once, before the hold is handed out
    private volatile String threadName = "";

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
        synchronized (this) {
            if (renew) {
                renewed = true;
            }
            lengthen(sentNanos + TimeUnit.MILLISECONDS.toNanos(leaseMillis), leaseMillis);
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

    /**
     * Redis confirmed a renewal that asked for {@code leaseMillis} (the lease when the renewal was sent, which an
     * extension may have raised since), counted from {@code startNanos}: its send time (less the drift, on Redlock).
     * Lease keeper thread.
     */
    public synchronized void leaseRenewed(long startNanos, long leaseMillis) {
        lengthen(startNanos + TimeUnit.MILLISECONDS.toNanos(leaseMillis), leaseMillis);
    }

    /**
     * Redis confirmed an extension to at least {@code leaseMillis} from {@code startNanos} (its send time, less the
     * drift on Redlock): the end here moves there unless it is later already, and from now on renewals ask for at
     * least {@code leaseMillis}. Any thread.
     *
     * @return false, changing nothing, if the hold is no longer held (lost at its deadline meanwhile, or released)
     */
    public synchronized boolean leaseExtended(long startNanos, long leaseMillis) {
        if (state != LeaseState.HELD) {
            return false;
        }
        lengthen(startNanos + TimeUnit.MILLISECONDS.toNanos(leaseMillis), leaseMillis);
        return true;
    }

    /**
     * Moves the lease end to {@code endNanos} if that is later, and the lease to {@code leaseMillis} if that is
     * longer; the start follows so that the pair gives the end, and is written first (see the class comment). Caller
     * holds this monitor.
     */
    private void lengthen(long endNanos, long leaseMillis) {
        long lease = Math.max(this.leaseMillis, leaseMillis);
        long end = leaseEndNanos();
        if (endNanos - end > 0) {
            end = endNanos;
        }
        leaseStartNanos = end - TimeUnit.MILLISECONDS.toNanos(lease);
        this.leaseMillis = lease;
    }

    public long leaseEndNanos() {
        // the lease before the start: see the class comment
        long lease = TimeUnit.MILLISECONDS.toNanos(leaseMillis);
        return leaseStartNanos + lease;
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

    /** Records the name of the thread that asked for this hold; called once, before the hold is handed out. */
    public void acquiredOn(String threadName) {
        this.threadName = threadName;
    }

    /** The name of the thread that asked for this hold, or "" (a virtual thread without a name). */
    public String threadName() {
        return threadName;
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

    /** It joined the client's table at {@code nowNanos}, by the client's ticker. The table calls it, once. */
    void joinedTable(long nowNanos) {
        heldSinceNanos = nowNanos;
    }

    /**
     * When it was acquired, by the wall clock as it reads now: now less how long it has been held by the client's
     * ticker, which reads {@code nowNanos} now (one clock reading kept per hold, not two).
     */
    public long heldSinceMillis(long nowNanos) {
        return System.currentTimeMillis() - heldMillis(nowNanos);
    }

    /** How long it has been held when the client's ticker reads {@code nowNanos}. */
    public long heldMillis(long nowNanos) {
        return TimeUnit.NANOSECONDS.toMillis(nowNanos - heldSinceNanos);
    }

    /**
     * Marks the lease lost and completes {@link #whenLost()}; returns false, and tells nobody, if the lease was
     * already lost or released.
     */
    public boolean lose(String reason) {
        if (!markLost(reason)) {
            return false;
        }
        tellLost(reason);
        return true;
    }

    /**
     * As {@link #lose}, but only if by {@code nowNanos} the hold is past the deadline {@code deadlineOf} gives: checked
     * and marked under the monitor that orders lease changes, so a lease extension confirmed meanwhile keeps the hold
     * (false). {@link #whenLost()} completes after the monitor is let go, as its callbacks may do anything.
     */
    public boolean loseAtDeadline(long nowNanos, ToLongFunction<Hold> deadlineOf, String reason) {
        synchronized (this) {
            if (nowNanos - deadlineOf.applyAsLong(this) < 0 || !markLost(reason)) {
                return false;
            }
        }
        tellLost(reason);
        return true;
    }

    /** Sets the state LOST and the reason, once; false if it was lost or released already. */
    private boolean markLost(String reason) {
        // of two lose() calls at once, only the one that set the reason may set LOST, so the reason stays the one
        // that is reported
        return state == LeaseState.HELD && LOST_REASON.compareAndSet(this, (String) null, reason)
                && STATE.compareAndSet(this, LeaseState.HELD, LeaseState.LOST);
    }

    private void tellLost(String reason) {
        whenLost().complete(new LeaseLost(lockName, fencingToken, reason));
        span.ended(this, true);
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
