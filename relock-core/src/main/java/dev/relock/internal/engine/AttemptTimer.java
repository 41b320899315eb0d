package dev.relock.internal.engine;

import io.netty.util.Timeout;
import io.netty.util.Timer;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The one timer of an acquisition's next attempt (or of its wait's end), and where it waits: on the client's hashed
 * wheel when it is far and may be late ({@link WheelTimers}), else with the thread waiting in
 * {@link SteppedAcquisition#run} when there is one (it parks until then, and arming or cancelling it wakes no other
 * thread), else on the event executors. Times are readings of the client's {@link Ticker}.
 *
 * <p>Invariants. At most one of {@link #onExecutors}, {@link #onWheel} and {@link #forWaiter} is set, and none when no
 * timer is armed. All are guarded by the acquisition's lock; only the waiter reads {@link #forWaiter},
 * {@link #waiterTook} and {@link #at} without it, to know how long to park. A timer is armed for the waiter only while
 * one waits in run(), which it leaves only once the outcome is decided, after which nothing is armed.
 */
final class AttemptTimer {

    private final Ticker ticker;
    // the client's event executors, not I/O threads: where timers run
    private final ScheduledExecutorService events;
    // the client's hashed wheel timer, for far timers only
    private final Timer wheel;
    // tells whether a thread waits in run(), and which
    private final EventInbox inbox;
    // the acquisition's lock
    private final ReentrantLock lock;
    private ScheduledFuture<?> onExecutors;
    private Timeout onWheel;
    private volatile Runnable forWaiter;
    // the waiter took forWaiter to run it: armed still (isArmed) until fired(), cancel() or the next arm()
    private volatile boolean waiterTook;
    // when the armed timer fires
    private volatile long at;

    AttemptTimer(Ticker ticker, ScheduledExecutorService events, Timer wheel, EventInbox inbox, ReentrantLock lock) {
        this.ticker = ticker;
        this.events = events;
        this.wheel = wheel;
        this.inbox = inbox;
        this.lock = lock;
    }

    /**
     * Arms the timer to run {@code onFire} at {@code at}; none may be armed. {@code mayWaitOnWheel}: it may fire a tick
     * or two late, and is as far before the wait's deadline as {@link WheelTimers#FAR_NANOS}; it then waits on the
     * wheel if it is that far away. Lock held.
     *
     * @return false if the executors or the wheel refused it (the client closed): nothing is armed
     */
    boolean arm(Runnable onFire, long at, boolean mayWaitOnWheel) {
        long delay = Math.max(0, at - ticker.nanoTime());
        try {
            if (mayWaitOnWheel && delay >= WheelTimers.FAR_NANOS) {
                onWheel = WheelTimers.onWheel(wheel, events, onFire, delay);
            } else if (inbox.hasWaiter()) {
                this.at = at;
                waiterTook = false;
                forWaiter = onFire;
                Thread waiting = inbox.waiter();
                if (waiting != Thread.currentThread()) {
                    // it may be parked until later, or without a deadline
                    LockSupport.unpark(waiting);
                }
                return true;
            } else {
                onExecutors = events.schedule(onFire, delay, TimeUnit.NANOSECONDS);
            }
            this.at = at;
            return true;
        } catch (RejectedExecutionException | IllegalStateException e) {
            // the wheel refuses once stopped, with the client's resources
            return false;
        }
    }

    /** Cancels the armed timer, if any. Lock held. */
    void cancel() {
        if (onExecutors != null) {
            onExecutors.cancel(false);
        } else if (onWheel != null) {
            onWheel.cancel();
        }
        fired();
    }

    /** Whether a timer is armed and has not fired ({@link #fired} not called since). Lock held. */
    boolean isArmed() {
        return onExecutors != null || onWheel != null || forWaiter != null;
    }

    /** When the armed timer fires. Lock held, {@link #isArmed}. */
    long at() {
        return at;
    }

    /** The armed timer fired and is wanted. Lock held. */
    void fired() {
        onExecutors = null;
        onWheel = null;
        forWaiter = null;
    }

    /** Whether a timer armed for the waiter is not taken yet: the waiter parks until {@link #at} at most. */
    boolean waitsForWaiter() {
        return forWaiter != null && !waiterTook;
    }

    /**
     * The timer armed for the waiter to run, if it is due at {@code now} and not taken yet; taken then, to be run
     * without the lock (it calls a step). Waiter only, lock not held.
     */
    Runnable takeDueForWaiter(long now) {
        if (!waitsForWaiter() || at - now > 0) {
            return null;
        }
        lock.lock();
        try {
            Runnable due = forWaiter;
            if (due == null || waiterTook || at - now > 0) {
                return null;
            }
            waiterTook = true;
            return due;
        } finally {
            lock.unlock();
        }
    }

    /** The timer, for a diagnosis. Lock held. */
    String describe() {
        if (!isArmed()) {
            return "none";
        }
        return "in " + TimeUnit.NANOSECONDS.toMillis(at - ticker.nanoTime()) + " ms"
                + (onWheel != null ? " (wheel" + (onWheel.isExpired() ? ", fired)" : ")")
                : forWaiter != null ? " (waiter's" + (waiterTook ? ", fired)" : ")")
                : onExecutors.isDone() ? " (fired)" : "");
    }
}
