package dev.relock.internal;

import dev.relock.LeaseLost;
import dev.relock.LeaseState;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One owner's hold on one lock in one mode (a writer that downgraded has two), as this client knows it: the fencing token, how many times the
 * owner holds it, the lease, and whether the lease keeper renews it.
 *
 * <p>Threads: the owner changes the hold count; the lease keeper thread confirms leases and may
 * mark the hold lost; any thread reads. State moves only HELD -> RELEASED or HELD -> LOST.
 * {@code leaseStartNanos} is when the request that last set the lease was <em>sent</em>, so the
 * lease as seen here never outlives the one Redis keeps.
 */
public final class Hold {

    public final String lockName;
    public final LockKeys keys;
    public final LockMode mode;
    public final String owner;
    public final long fencingToken;
    // when it was acquired: System.currentTimeMillis() for users, System.nanoTime() for durations
    public final long heldSinceMillis = System.currentTimeMillis();
    final long heldSinceNanos = System.nanoTime();

    private final AtomicInteger holds = new AtomicInteger(1);
    private final AtomicReference<LeaseState> state = new AtomicReference<>(LeaseState.HELD);
    private final CompletableFuture<LeaseLost> lost = new CompletableFuture<>();
    private volatile boolean renewed;
    private volatile long leaseMillis;
    private volatile long leaseStartNanos;
    // set before the release of the last hold is sent: a renewal that fails after it is no loss
    private volatile boolean releasing;
    // told when the hold ends; set once, by the acquiring thread, just after acquisition
    private volatile LockEvents.HoldSpan span = NoLockEvents.INSTANCE;

    public Hold(String lockName, LockKeys keys, LockMode mode, String owner, long fencingToken,
            long leaseMillis, boolean renewed, long leaseStartNanos) {
        this.lockName = lockName;
        this.keys = keys;
        this.mode = mode;
        this.owner = owner;
        this.fencingToken = fencingToken;
        this.leaseMillis = leaseMillis;
        this.renewed = renewed;
        this.leaseStartNanos = leaseStartNanos;
    }

    public int holds() {
        return holds.get();
    }

    /** Another hold by the same owner; Redis has already extended the lease to at least leaseMillis. */
    public void reenter(long leaseMillis, boolean renew, long sentNanos) {
        holds.incrementAndGet();
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
        return holds.updateAndGet(n -> Math.max(0, n - 1));
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
        return state.get();
    }

    public void beginRelease() {
        releasing = true;
    }

    public boolean releasing() {
        return releasing;
    }

    public void released() {
        if (state.compareAndSet(LeaseState.HELD, LeaseState.RELEASED)) {
            span.ended(this, false);
        }
    }

    /** From now on {@code span} hears when this hold ends (at once if it has ended already). */
    void observedBy(LockEvents.HoldSpan span) {
        this.span = span;
        // a loss on the lease keeper thread may have come first and told the old span; the span
        // ignores a second end
        LeaseState now = state();
        if (now != LeaseState.HELD) {
            span.ended(this, now == LeaseState.LOST);
        }
    }

    public long heldMillis() {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - heldSinceNanos);
    }

    /** Marks the lease lost; returns false if it was already lost or released. */
    public boolean lose(String reason) {
        if (!state.compareAndSet(LeaseState.HELD, LeaseState.LOST)) {
            return false;
        }
        lost.complete(new LeaseLost(lockName, fencingToken, reason));
        span.ended(this, true);
        return true;
    }

    /** Why the lease was lost, or null while it is not. */
    public String lostReason() {
        LeaseLost event = lost.getNow(null);
        return event == null ? null : event.reason();
    }

    public CompletableFuture<LeaseLost> whenLost() {
        return lost;
    }
}
