package dev.relock.internal.engine;

import dev.relock.LeaseLost;
import dev.relock.LeaseLostException;
import dev.relock.LeaseState;
import dev.relock.LockHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

/**
 * One acquisition of a {@link Hold}; closing it gives up that one hold, once. Kept by the caller
 * for as long as the hold lasts, so it is one small object: the state is a field set through
 * a VarHandle, and the engine that releases and extends the hold is the client's one instance.
 *
 * <p>A condition's await ({@code RelockCondition.awaitAsync}) gives the hold up and takes the lock back with a new
 * hold. The states: OPEN (holds {@link #hold}); CLOSED; AWAITING (lent to an await, {@link #lendForAwait}: holds
 * nothing); RESUMING (the await took the lock back, {@link #takeBack}, and its caller's stage is being completed: holds
 * the new hold); CLOSED_AWAITING (closed before the caller took the result: the await, not the close, gives up what it
 * takes back). A close while AWAITING or RESUMING first cancels the caller's stage: if the stage had completed, the
 * caller took the result and the close releases as any close does; if not, it is cancelled and the await gives up. A
 * close that finds AWAITING has won over the take-back, which needs AWAITING too: the stage ends cancelled even when the
 * await takes the lock back between the close's compare-and-set and its cancel ({@link #resume}).
 * {@link #hold} changes only in {@link #takeBack}, under this handle's monitor, which also orders it against
 * {@link #whenLost}'s linking.
 *
 * <p>Public because the single-server engine makes handles of holds it takes at once (multi-lock) and semaphore permits,
 * and its conditions await with handles.
 */
public class HoldHandle implements LockHandle {

    private static final VarHandle STATE;
    private static final int OPEN = 0;
    private static final int CLOSED = 1;
    private static final int AWAITING = 2;
    private static final int CLOSED_AWAITING = 3;
    private static final int RESUMING = 4;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(HoldHandle.class, "state", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final Engine engine;
    private volatile Hold hold;
    private volatile int state; // STATE
    // made by the first whenLost(): completed by the loss of this handle's hold, whichever it is then; guarded by this
    private CompletableFuture<LeaseLost> lost;
    // the stage of the await the hold is lent to, which a close cancels; set just after AWAITING (a close in between
    // finds the previous await's, done, and lendForAwait then cancels this one)
    private volatile CompletableFuture<?> awaited;

    /** A handle whose close() or releaseAfter(...) gives the hold up through {@code engine}, once. */
    public HoldHandle(Engine engine, Hold hold) {
        this.engine = engine;
        this.hold = hold;
    }

    @Override
    public String name() {
        return hold.lockName;
    }

    @Override
    public long fencingToken() {
        return hold.fencingToken;
    }

    @Override
    public LeaseState state() {
        LeaseState held = hold.state();
        return !holding() && held == LeaseState.HELD ? LeaseState.RELEASED : held;
    }

    /** Whether the handle holds its hold now: open, or resuming after an await. */
    private boolean holding() {
        int now = state;
        return now == OPEN || now == RESUMING;
    }

    @Override
    public CompletionStage<LeaseLost> whenLost() {
        synchronized (this) {
            if (lost == null) {
                lost = new CompletableFuture<>();
                hold.whenLost().thenAccept(lost::complete);
            }
            return lost.minimalCompletionStage();
        }
    }

    @Override
    public void close() {
        while (true) {
            int now = state;
            if (now == OPEN && STATE.compareAndSet(this, OPEN, CLOSED)) {
                engine.release(hold, 0, true);
                return;
            }
            if (now == AWAITING && STATE.compareAndSet(this, AWAITING, CLOSED_AWAITING)) {
                // the hold is given up already: the await ends, and gives up what it takes back. A first await's
                // stage may not be set yet: lendForAwait then finds CLOSED_AWAITING and cancels it
                CompletableFuture<?> stage = awaited;
                if (stage != null) {
                    stage.cancel(false);
                }
                return;
            }
            if (now == RESUMING) {
                CompletableFuture<?> stage = awaited;
                stage.cancel(false);
                boolean taken = !stage.isCancelled();
                Hold taking;
                synchronized (this) {
                    // the RESUMING of this stage's await, not of a later await the caller started meanwhile (RESUMING,
                    // OPEN, AWAITING, RESUMING again): takeBack and the settling run under this monitor too
                    if (awaited != stage || !STATE.compareAndSet(this, RESUMING, taken ? CLOSED : CLOSED_AWAITING)) {
                        continue;
                    }
                    taking = hold;
                }
                if (taken) {
                    // the caller took the await's result: this is its close
                    engine.release(taking, 0, true);
                }
                return;
            }
            if (now == CLOSED || now == CLOSED_AWAITING) {
                return;
            }
        }
    }

    @Override
    public void releaseAfter(Duration delay) {
        Objects.requireNonNull(delay, "delay");
        settleTakenResult();
        if (state == AWAITING || state == RESUMING) {
            throw new IllegalStateException("the handle of '" + hold.lockName + "' awaits a condition: releaseAfter"
                    + " once the await's stage has completed, or close it");
        }
        if (STATE.compareAndSet(this, OPEN, CLOSED)) {
            long nanos = Durations.saturatedNanos(delay);
            // a positive delay shorter than a millisecond still delays
            try {
                engine.release(hold, nanos <= 0 ? 0 : Math.max(1, TimeUnit.NANOSECONDS.toMillis(nanos)), true);
            } catch (IllegalStateException refused) {
                // refused before anything was sent (a downgraded write hold): still held, and still to close
                STATE.set(this, OPEN);
                throw refused;
            }
        }
    }

    @Override
    public void extendLease(Duration lease) {
        long leaseMillis = Durations.leaseMillis(lease, hold.mode.description + " '" + hold.lockName + "'");
        engine.checkLease(hold.lockName, leaseMillis, lease.toString());
        settleTakenResult();
        int now = state;
        if (now == AWAITING || now == RESUMING) {
            // RESUMING here: the await is taking the lock back, and its stage has not completed (hold may still be
            // the one lent)
            throw new IllegalStateException("the handle of '" + hold.lockName + "' awaits a condition: it holds"
                    + " nothing until the await takes the lock back, and has no lease to extend");
        }
        if (!holding()) {
            throw new IllegalStateException("the handle of '" + hold.lockName + "' (fencing token " + hold.fencingToken
                    + ") is closed: its hold was given up, and there is no lease left to extend");
        }
        if (hold.state() == LeaseState.LOST) {
            // told once already, when it was found lost
            throw new LeaseLostException(hold.lockName, hold.lostReason());
        }
        engine.extendLease(hold, leaseMillis);
    }

    /** The hold this handle gives up when closed: the one it was made with, or the one a condition's await took. */
    public Hold hold() {
        return hold;
    }

    /**
     * The hold this handle lends to a condition's await, which gives it up: the handle holds nothing until
     * {@link #takeBack} or {@link #endAwait}, and closing it meanwhile cancels {@code awaited}, the await's stage.
     *
     * @throws IllegalStateException if the handle is closed, or lent to another await
     */
    public Hold lendForAwait(CompletableFuture<?> awaited) {
        settleTakenResult();
        if (!STATE.compareAndSet(this, OPEN, AWAITING)) {
            // CLOSED_AWAITING: closed while an earlier await was still ending (a cancelled one hands the handle back
            // after its stage completed); it is closed all the same
            int now = state;
            throw new IllegalStateException("the handle of '" + hold.lockName + "' (fencing token " + hold.fencingToken
                    + ") " + (now == CLOSED || now == CLOSED_AWAITING ? "is closed: its hold was given up"
                            : "awaits a condition already")
                    + ", so it cannot await one");
        }
        this.awaited = awaited;
        if (state == CLOSED_AWAITING) {
            // closed before the stage was set: that close cancelled none
            awaited.cancel(false);
        }
        return hold;
    }

    /**
     * The await ended without taking the lock back: the handle keeps the hold it lent (still held if the await failed
     * before giving it up, lost or released otherwise; closed if released).
     *
     * @return false if the handle was closed during the await: whoever called this gives up the lent hold if it is
     *     still held
     */
    public boolean endAwait() {
        if (STATE.compareAndSet(this, AWAITING, hold.state() == LeaseState.RELEASED ? CLOSED : OPEN)) {
            return true;
        }
        STATE.set(this, CLOSED);
        return false;
    }

    /**
     * The await this handle's hold is lent to took the lock back with {@code again}, and its caller's stage
     * {@code awaited} is to complete with {@code signalled}: the handle holds {@code again} from now on, unless it was
     * closed while it awaited, or the caller cancelled the stage. On the thread that completes the await; the stage's
     * callbacks run in it, outside this handle's monitor. A loss of {@code again} completes {@link #whenLost}.
     *
     * <p>Exactly one of this handle and whoever called this gives {@code again} up: a close that came while the hold
     * was lent (CLOSED_AWAITING) cancels the stage, so the caller never learns of a hold the handle does not have (the
     * close and the take-back are ordered by the state's compare-and-set, and the stage completes only after a
     * take-back won); a caller that took the result gives it up through the handle.
     *
     * @return whether whoever called this gives {@code again} up: nobody took it (the handle was closed while it
     *     awaited, or the stage was cancelled), and a signal it came with was not told to anybody
     */
    public boolean resume(Hold again, CompletableFuture<Boolean> awaited, boolean signalled) {
        boolean taken;
        if (takeBack(again)) {
            taken = awaited.complete(signalled);
        } else {
            // closed while it awaited: that close cancels the stage, here too in case it has not yet
            awaited.cancel(false);
            taken = false;
        }
        return settleAwait(awaited, taken);
    }

    /**
     * The handle holds {@code again} (RESUMING) while the await's stage is completed, then {@link #settleAwait}
     * decides; false, and the handle keeps the hold it lent, if it was closed while it awaited.
     */
    private synchronized boolean takeBack(Hold again) {
        if (!STATE.compareAndSet(this, AWAITING, RESUMING)) {
            return false;
        }
        hold = again;
        if (lost != null) {
            again.whenLost().thenAccept(lost::complete);
        }
        return true;
    }

    /**
     * After {@link #takeBack}, once the await's {@code stage} was completed: the handle keeps the hold if the caller
     * {@code taken} the result (and has not closed it since, which released it). A caller that took it may have
     * settled already ({@link #settleTakenResult}) and gone on, to a release or to another await of this handle,
     * whose states are not this await's to change: only this await's RESUMING is settled here.
     *
     * @return whether whoever called this gives the hold taken back up: the caller did not take the result (it
     *     cancelled, or closed the handle before)
     */
    private synchronized boolean settleAwait(CompletableFuture<?> stage, boolean taken) {
        if (taken) {
            // RESUMING of this await (a later await has its own stage there), or nothing left to settle
            if (awaited == stage) {
                STATE.compareAndSet(this, RESUMING, OPEN);
            }
            return false;
        }
        // not taken: cancelled, so the caller has gone nowhere and the await's stage is still the handle's
        return STATE.compareAndSet(this, RESUMING, CLOSED) || STATE.compareAndSet(this, CLOSED_AWAITING, CLOSED);
    }

    /**
     * A caller that has its await's result (the stage completed, not cancelled) holds the lock again: it may await or
     * release at once, from the stage's own callback too, before the thread that completed the stage settles it, so
     * it settles RESUMING here as {@link #settleAwait} would. Under this handle's monitor, as settleAwait, so that the
     * two never settle different awaits' RESUMING for each other.
     */
    private synchronized void settleTakenResult() {
        CompletableFuture<?> stage = awaited;
        if (state == RESUMING && stage != null && stage.isDone() && !stage.isCancelled()) {
            STATE.compareAndSet(this, RESUMING, OPEN);
        }
    }

    @Override
    public String toString() {
        return "LockHandle[" + hold.lockName + ", token " + hold.fencingToken + ", " + state() + "]";
    }
}
