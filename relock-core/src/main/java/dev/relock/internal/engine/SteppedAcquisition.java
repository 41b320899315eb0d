package dev.relock.internal.engine;

import dev.relock.RelockException;
import io.netty.util.Timer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What every acquisition state machine shares, whatever it sends and to how many servers: what is asked
 * (the lock, mode, owner, lease; the wait's deadline), the outcome (the hold, null when the wait ended or
 * was cancelled, or a failure), completed once; the blocking and the asynchronous way to wait for it; the
 * timer of the next attempt ({@link AttemptTimer}); and the discipline its events are handled in.
 *
 * <p>Invariants. Every event (a reply, a timer, a wake-up, a cancel) is one {@link #step}: its handling runs
 * under {@link #lock}, which subclasses also guard their own state with, and the outcome is completed after the
 * lock is released, so no caller's callback ever runs under it. A handling that throws decides the outcome
 * with that exception ({@link #handlingFailed}; an Error with a RelockException around it, and the Error goes on).
 * After every handling an undecided acquisition has an attempt in flight or a timer armed ({@link #awaitsEvent});
 * a breach, a bug, is logged and mended ({@link #stranded}). Only {@link #decide} decides it, at most once, and
 * {@link #isDecided} tells whether it has been. No handling runs on a Netty I/O thread, where a command it
 * sends would overtake those other threads queued on that loop ({@link IoThreads}): an event that arrives on one
 * (a reply, a pub/sub message, a caller's callback or cancel) goes to the {@link EventInbox}, which keeps the order
 * of its events and who runs them; the outcome completes there too. On an I/O thread nothing waits for a handling,
 * a cancel's included, but a caller who chose to block there in {@link #run}. Every deadline and timer is a reading
 * of the client's {@link Ticker}.
 *
 * <p>Public because both engines' acquisitions, each in a package of its own, extend it.
 */
public abstract class SteppedAcquisition {

    private static final Logger log = LoggerFactory.getLogger(SteppedAcquisition.class);
    // -Drelock.internal.traceAcquisitions=true: each acquisition keeps a trail of its latest events for its ERROR lines;
    // every call of trace() is guarded by it, so that no message is built when it is off
    protected static final boolean TRACING = Boolean.getBoolean("relock.internal.traceAcquisitions");
    private static final long FIRST_MEND_DELAY_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    private static final long MAX_MEND_DELAY_NANOS = TimeUnit.SECONDS.toNanos(1);
    // the outcome of an acquisition whose handling failed with an Error when no other exception can be made
    private static final RelockException OUT_OF_RESOURCES = new RelockException(
            "acquire failed on an internal error (out of memory or stack); see the ERROR logged with it");

    // not synchronized: a virtual thread that enters never pins its carrier
    protected final ReentrantLock lock = new ReentrantLock();
    // the client acquiring
    protected final EngineClient core;
    protected final String name;
    protected final LockKeys keys;
    protected final LockMode mode;
    protected final String owner;
    protected final long leaseMillis;
    // whether the lease keeper renews the hold
    protected final boolean renewed;
    // the client's clock, which every deadline and timer is a reading of
    private final Ticker ticker;
    private final CompletableFuture<Hold> outcome = new CompletableFuture<>();
    // the handlings of events that arrived on an I/O thread, and who runs them
    private final EventInbox inbox;
    // the timer of the next attempt, or of the wait's end
    private final AttemptTimer attemptTimer;
    // the thread in run(), I/O thread or not, set before the first step: settle() unparks it once the outcome is done
    private volatile Thread blocked;
    // set by the thread that starts the acquisition, before its first step; told once, by settle()
    private LockEvents.Wait observed;
    // the name of the thread that started the acquisition, set before its first step: the hold's thread name
    private String startingThread = "";
    // all guarded by lock
    private boolean decided;
    private boolean settled;
    // a cancel decided the outcome (null), not an attempt, a timer or a failure before it
    private boolean cancelled;
    private Hold acquired;
    private RuntimeException failure;
    // set by the first step, guarded by lock: a wait without a deadline, or the deadline (a reading of the ticker)
    protected boolean forever;
    protected long deadline;
    // the latest events handled, for giveUpOverdue's diagnosis; only with -Drelock.internal.traceAcquisitions=true
    private final EventTrail trail = TRACING ? new EventTrail() : null;
    // how often stranded() mended this acquisition; guarded by lock
    private int mends;

    /**
     * @param events the client's event executors, which are not Netty I/O threads
     * @param wheel the client's hashed wheel timer, for far timers ({@link WheelTimers})
     * @param leaseMillis the lease, the client's default when {@code renewed}
     */
    protected SteppedAcquisition(EngineClient core, ScheduledExecutorService events, Timer wheel, String name,
            LockKeys keys, LockMode mode, String owner, long leaseMillis, boolean renewed) {
        this.core = core;
        this.ticker = core.ticker();
        this.inbox = new EventInbox(events, this::stepHere);
        this.attemptTimer = new AttemptTimer(ticker, events, wheel, inbox, lock);
        this.name = name;
        this.keys = keys;
        this.mode = mode;
        this.owner = owner;
        this.leaseMillis = leaseMillis;
        this.renewed = renewed;
    }

    /**
     * Acquires in the calling thread, waiting as asked.
     *
     * @param waitNanos how long to wait; zero or less tries once
     * @param forever wait without a deadline
     * @param interruptible whether an interrupt cancels and throws; otherwise the wait goes on and
     *     the interrupt status is kept
     * @return the hold, registered with the client, or null if the wait ended first
     */
    public final Hold run(long waitNanos, boolean forever, boolean interruptible) throws InterruptedException {
        // whether the outcome can be overdue: not for a wait without a deadline, nor once given up as overdue
        boolean bounded = !forever;
        // when it is, if bounded: the wait's end, plus what the attempt then in flight may take to be answered
        long overdueAt = bounded
                ? ticker.nanoTime() + Math.min(Math.max(0, waitNanos), Long.MAX_VALUE / 4) + settlingNanos()
                : 0;
        Thread self = Thread.currentThread();
        // never an I/O thread, where no handling may run (a caller blocked there waits for the executors)
        if (!IoThreads.isCurrent()) {
            inbox.enter(self);
        }
        // an outcome decided on another thread (a timer's step, a drain of the executors) wakes this one (settle())
        blocked = self;
        boolean interrupted = false;
        // an interrupt asked to cancel: once the outcome is in, whether the cancel came first says how to end
        boolean cancelAsked = false;
        try {
            start(waitNanos, forever);
            while (true) {
                inbox.drainIfAsked();
                if (outcome.isDone()) {
                    if (cancelAsked && decidedByCancel()) {
                        // the interrupt is reported by the exception, not kept as the thread's status
                        interrupted = false;
                        throw new InterruptedException("acquiring " + mode.description + " '" + name + "'");
                    }
                    // not interrupted, or the outcome came before the cancel: take it
                    return outcome.get();
                }
                long now = ticker.nanoTime();
                Runnable due = attemptTimer.takeDueForWaiter(now);
                if (due != null) {
                    try {
                        due.run();
                    } catch (Error e) {
                        // as in a drain: an Error in a step is logged by stepHere, with the outcome decided first
                    }
                } else if (bounded && overdueAt - now <= 0) {
                    bounded = false;
                    giveUpOverdue();
                } else {
                    park(now, bounded, overdueAt);
                }
                if (Thread.interrupted()) {
                    interrupted = true;
                    if (interruptible && !cancelAsked) {
                        // handled here at once, or on an I/O thread queued: the outcome follows either way
                        cancelAsked = true;
                        cancel();
                    }
                }
            }
        } catch (ExecutionException e) {
            throw rethrown(e.getCause());
        } finally {
            inbox.leave();
            // the outcome is done: nothing settles any more that would unpark this thread
            blocked = null;
            if (interrupted) {
                self.interrupt();
            }
        }
    }

    /**
     * Parks the waiter until the timer armed for it to run is due ({@link AttemptTimer#waitsForWaiter}), or until
     * {@code overdueAt} if {@code bounded} and that is sooner, or until unparked: by an event for it to drain, a timer
     * armed anew, or the outcome. Waiter only.
     */
    private void park(long now, boolean bounded, long overdueAt) {
        boolean timed = attemptTimer.waitsForWaiter();
        long wakeAt = attemptTimer.at();
        if (bounded || timed) {
            long until = !timed || (bounded && overdueAt - wakeAt < 0) ? overdueAt : wakeAt;
            LockSupport.parkNanos(this, until - now);
        } else {
            LockSupport.park(this);
        }
    }

    /**
     * The outcome of a wait with a deadline has not come by then and {@link #settlingNanos} more: a bug of the state
     * machine (an event lost, no timer armed). Said loudly, with the state, and ended as a cancel would end it, so
     * the caller returns as its wait promised.
     */
    private void giveUpOverdue() {
        String state;
        try {
            state = lock.tryLock(1, TimeUnit.SECONDS) ? describeLocked() : "(its lock is held by another thread)";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            state = "(interrupted while reading it)";
        }
        log.error("{} '{}' by {}: the wait ended {} ms ago and the acquisition has not; giving it up. This is a bug"
                + " in relock, please report it with this line; state: {}", mode.description, name, owner,
                TimeUnit.NANOSECONDS.toMillis(settlingNanos()), state);
        cancel();
        settle();
    }

    /** {@link #lock} held by the caller, who also releases it: the state for {@link #giveUpOverdue}'s message. */
    private String describeLocked() {
        try {
            return describeHeld();
        } finally {
            lock.unlock();
        }
    }

    /** The state, for a diagnosis. Lock held. */
    private String describeHeld() {
        return "decided=" + decided + ", settled=" + settled + ", timer=" + attemptTimer.describe() + ", "
                + describe() + (TRACING ? trail.toString() : "");
    }

    /**
     * Notes an event in the trail that {@link #giveUpOverdue} prints, when tracing is on
     * ({@code -Drelock.internal.traceAcquisitions=true}); costs nothing otherwise. Lock held.
     */
    protected final void trace(String event) {
        if (TRACING) {
            trail.add(ticker.nanoTime(), event);
        }
    }

    /** The subclass's state, for a diagnosis. Lock held. */
    protected abstract String describe();

    /**
     * How long after the wait's end the outcome may still take, at most: the command timeout of the attempt in flight
     * then, and of the clean-up or check that follows it. A generous bound, never a performance goal.
     */
    protected abstract long settlingNanos();

    /**
     * Starts acquiring and returns at once. Completing (or cancelling) the returned future cancels the
     * acquisition; a hold that arrives when nobody can take it any more is released.
     *
     * @param onAcquired what the future completes with for the hold
     * @param onTimeout what it completes with when the wait ends first
     */
    public final <T> CompletableFuture<T> startAsync(long waitNanos, boolean forever, Function<Hold, T> onAcquired,
            T onTimeout) {
        CompletableFuture<T> result = new CompletableFuture<>();
        // whoever completes the result first, this acquisition's outcome is no longer wanted after it
        result.whenComplete((value, error) -> {
            if (!outcome.isDone()) {
                cancel();
            }
        });
        outcome.whenComplete((hold, error) -> {
            if (error != null) {
                result.completeExceptionally(error);
            } else if (!result.complete(hold == null ? onTimeout : onAcquired.apply(hold)) && hold != null) {
                releaseUnseen(hold);
            }
        });
        start(waitNanos, forever);
        return result;
    }

    private void start(long waitNanos, boolean forever) {
        startingThread = Thread.currentThread().getName();
        observed = started();
        step(() -> {
            this.forever = forever;
            // capped so the deadline arithmetic cannot overflow; 146 years is forever enough
            this.deadline = ticker.nanoTime() + Math.min(Math.max(0, waitNanos), Long.MAX_VALUE / 2);
            begin(waitNanos);
        });
    }

    /**
     * Gives up, unless the outcome is decided already: undoes what is in flight and decides the outcome as null. A
     * cancel is an event like any other, one {@link #step}: handled before this returns, or, called on a Netty I/O
     * thread (a Reactor cancel, a disconnect, a caller's callback), put in the {@link EventInbox} behind the events
     * that came before it, and this returns at once; it never waits there for an executor, which would stall that
     * loop and every connection on it. So this cannot tell whether it came first; the outcome does: null if it did, else
     * the hold or failure decided before it. Neither way is a hold lost: {@link #startAsync}'s future, whose
     * completion is what cancels, releases a hold that comes after it, and {@link #run} returns one that came first
     * (it throws InterruptedException only when its cancel did).
     */
    public final void cancel() {
        step(() -> {
            if (!decided) {
                giveUp();
                cancelled = true;
            }
        });
    }

    /** Whether the outcome, decided, was decided by a {@link #cancel}. */
    private boolean decidedByCancel() {
        lock.lock();
        try {
            return cancelled;
        } finally {
            lock.unlock();
        }
    }

    /** The caller gave up: undo what is in flight and {@link #decide} null. Lock held, not decided. */
    protected abstract void giveUp();

    /** Called once, in the starting thread, before the first step: returns who hears of the outcome. */
    protected abstract LockEvents.Wait started();

    /**
     * The first step: takes the wait as asked ({@link #forever} and {@link #deadline} are set; {@code waitNanos}
     * zero or less: one try) and sends the first attempt. Lock held.
     */
    protected abstract void begin(long waitNanos);

    /** Releases a hold acquired for a caller who no longer wants it. */
    protected abstract void releaseUnseen(Hold hold);

    /**
     * A handling threw: undo what is in flight or was just taken, and {@link #decide} with {@code error} (if
     * this throws too, the outcome is decided with {@code error} all the same). Lock held, not decided.
     */
    protected abstract void handlingFailed(RuntimeException error);

    /** Called once the outcome is decided, without the lock, before anyone hears of it. */
    protected void ended() {
    }

    /**
     * Runs one event's handling under the lock, then completes the outcome if it was decided; on a Netty I/O
     * thread, puts both in the {@link EventInbox} and returns at once.
     */
    protected final void step(Runnable handling) {
        if (IoThreads.isCurrent()) {
            inbox.add(handling);
            return;
        }
        stepHere(handling);
    }

    private void stepHere(Runnable handling) {
        Error fatal = null;
        lock.lock();
        try {
            handling.run();
            if (!decided && lock.getHoldCount() == 1 && !awaitsEvent()) {
                stranded();
            }
        } catch (RuntimeException | Error e) {
            if (e instanceof Error error) {
                fatal = error;
            }
            if (!decided) {
                // an Error is a bug, or the JVM out of memory or stack: the outcome is decided all the same, so no
                // caller waits forever; nothing here may throw past the decision (the fallback needs no memory)
                RuntimeException failure = OUT_OF_RESOURCES;
                try {
                    failure = e instanceof RuntimeException runtime ? runtime
                            : new RelockException("acquire of '" + name + "' failed on an internal error: " + e, e);
                    handlingFailed(failure);
                } catch (RuntimeException | Error also) {
                    if (failure != OUT_OF_RESOURCES) {
                        failure.addSuppressed(also);
                    }
                } finally {
                    if (!decided) {
                        decide(null, failure);
                    }
                }
            }
        } finally {
            lock.unlock();
            try {
                if (fatal != null) {
                    // before the outcome completes, so whoever hears of the failure finds the line logged
                    log.error("{} '{}' by {}: an error in handling an event of the acquisition; it failed. This is a"
                            + " bug in relock (or the JVM is out of memory or stack), please report it",
                            mode.description, name, owner, fatal);
                }
            } catch (RuntimeException | Error ignored) {
                // logging itself failed: the outcome is decided all the same
            } finally {
                settle();
            }
        }
        if (fatal != null) {
            throw fatal;
        }
    }

    /**
     * Whether something is sure to wake this undecided acquisition: an attempt (or a check that follows one) in
     * flight, or an armed timer. True after every event's handling; {@link #stranded} mends a breach. Lock held.
     */
    protected abstract boolean awaitsEvent();

    /**
     * An event's handling left this undecided acquisition with nothing to wake it, a bug: said loudly (an ERROR with
     * the state the first time, DEBUG after), and mended by a timer: at once the first time, then after a back-off
     * that doubles up to a second, so a bug that strands every step cannot turn a wait into a loop of attempts.
     * Lock held.
     */
    private void stranded() {
        if (mends == 0) {
            log.error("{} '{}' by {}: an event's handling left the acquisition with neither an attempt in flight nor a"
                    + " timer; trying again at once. This is a bug in relock that it recovered from, please report it"
                    + " with this line; state: {}", mode.description, name, owner, describeHeld());
        } else {
            log.debug("{} '{}' by {}: stranded again ({} times), mended: {}", mode.description, name, owner, mends + 1,
                    describeHeld());
        }
        long delay = mends == 0 ? 0 : Math.min(MAX_MEND_DELAY_NANOS, FIRST_MEND_DELAY_NANOS << Math.min(mends - 1, 20));
        mends++;
        recover(ticker.nanoTime() + delay);
    }

    /**
     * Arms what {@link #stranded} needs: a timer at {@code at} (a reading of the client's ticker) for the next
     * attempt, or for the end of a wait whose deadline comes first (then no attempt follows). Lock held, not decided.
     */
    protected abstract void recover(long at);

    /**
     * Arms the timer to run {@code onFire} at {@code at} (a reading of the client's ticker), in place of the one
     * armed. The callback is not a step: it calls one, and checks there that it is still wanted. A timer that
     * {@code mayBeLate} (a retry at a holder's lease end, a back-off), {@link WheelTimers#FAR_NANOS} or more away and
     * as far before the wait's deadline, waits on the wheel and may fire a tick or two late; any other (the deadline's
     * own, a turn or a check that fairness counts on, a spreading jitter) fires on time: run by the thread that waits
     * in {@link #run} when there is one (it parks until then, and arming or cancelling it wakes no other thread), else
     * on the event executors ({@link AttemptTimer}). Lock held.
     *
     * @return false if the client is closed or its executors are shut down: nothing is armed
     */
    protected final boolean armTimer(Runnable onFire, long at, boolean mayBeLate) {
        if (TRACING) {
            trace("arm in " + (at - ticker.nanoTime()) / 1_000_000 + " ms" + (mayBeLate ? ", may be late" : ""));
        }
        cancelTimer();
        if (core.isClosed()) {
            // close() may have failed the waiting acquisitions already, and shuts the timers down: none would fire
            return false;
        }
        return attemptTimer.arm(onFire, at, mayBeLate && (forever || deadline - at >= WheelTimers.FAR_NANOS));
    }

    /**
     * The start of every attempt's step: fails the acquisition if the client was closed meanwhile, else
     * cancels the armed timer. Lock held.
     *
     * @return whether to send the attempt
     */
    protected final boolean readyToAttempt() {
        if (core.isClosed()) {
            finish(null, core.closedException());
            return false;
        }
        cancelTimer();
        return true;
    }

    /**
     * Ends the acquisition: undoes what an unsuccessful end must undo (an attempt in flight, a place in a
     * queue), then {@link #decide}s. Lock held, not decided.
     */
    protected abstract void finish(Hold hold, RuntimeException error);

    /** Cancels the armed timer, if any. Lock held. */
    protected final void cancelTimer() {
        if (hasTimer()) {
            if (TRACING) {
                trace("cancel timer");
            }
            attemptTimer.cancel();
        }
    }

    /** Whether a timer is armed and has not fired ({@link #timerFired} not called since). Lock held. */
    protected final boolean hasTimer() {
        return attemptTimer.isArmed();
    }

    /** When the armed timer fires. Lock held, {@link #hasTimer}. */
    protected final long timerAt() {
        return attemptTimer.at();
    }

    /** The armed timer fired and is wanted. Lock held. */
    protected final void timerFired() {
        attemptTimer.fired();
    }

    /** Whether the outcome is decided. Lock held. */
    protected final boolean isDecided() {
        return decided;
    }

    /** Decides the outcome: {@code hold}, or null, or {@code error} when not null. Lock held; at most once. */
    protected final void decide(Hold hold, RuntimeException error) {
        if (hold != null) {
            hold.acquiredOn(startingThread);
        }
        if (TRACING) {
            trace("decide " + (hold != null ? "hold" : error != null ? error.getClass().getSimpleName() : "null"));
        }
        decided = true;
        acquired = hold;
        failure = error;
    }

    /** Completes the outcome once it is decided; called without the lock, so callbacks never run under it. */
    private void settle() {
        if (lock.isHeldByCurrentThread()) {
            // an event handled inside another one's step (a reply that came at once); the outer step settles
            return;
        }
        Hold hold;
        RuntimeException error;
        lock.lock();
        try {
            if (!decided || settled) {
                return;
            }
            settled = true;
            hold = acquired;
            error = failure;
        } finally {
            lock.unlock();
        }
        // the observer hears of the outcome before anyone waiting for it does; the outcome completes even if the
        // engine's ended() or an observer (a user's ObservationHandler) throws, and such a failure does not reach the
        // caller, who would otherwise never see a hold it got
        try {
            ended();
            if (error != null) {
                observed.failed(error);
            } else if (hold == null) {
                // the wait ended, or it was cancelled or interrupted
                observed.timedOut();
            } else {
                observed.acquired(hold);
            }
        } catch (RuntimeException e) {
            log.warn("{} '{}' by {}: telling the outcome of the acquisition failed; the outcome stands",
                    mode.description, name, owner, e);
        } finally {
            if (error != null) {
                outcome.completeExceptionally(error);
            } else {
                outcome.complete(hold);
            }
            Thread inRun = blocked;
            if (inRun != null && inRun != Thread.currentThread()) {
                LockSupport.unpark(inRun);
            }
        }
    }

    private static RuntimeException rethrown(Throwable cause) {
        if (cause instanceof RuntimeException runtime) {
            return runtime;
        }
        if (cause instanceof Error error) {
            throw error;
        }
        return new RelockException("acquiring failed: " + cause, cause);
    }
}
