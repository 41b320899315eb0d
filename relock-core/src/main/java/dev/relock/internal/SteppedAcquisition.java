package dev.relock.internal;

import dev.relock.RelockException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;

/**
 * What every acquisition state machine shares, whatever it sends and to how many servers: the outcome (the
 * hold, null when the wait ended or was cancelled, or a failure), completed once; the blocking and the
 * asynchronous way to wait for it; and the discipline its events are handled in.
 *
 * <p>Invariants. Every event (a reply, a timer, a wake-up, a cancel) is one {@link #step}: its handling runs
 * under {@link #lock}, which subclasses also guard their own state with, and the outcome is completed after the
 * lock is released, so no caller's callback ever runs under it. A handling that throws decides the outcome
 * with that exception ({@link #handlingFailed}). Only {@link #decide} decides it, at most once, and
 * {@link #isDecided} tells whether it has been. No handling runs on a Netty I/O thread, where a command it
 * sends would overtake those other threads queued on that loop ({@link IoThreads}): an event that arrives on one
 * (a reply, a pub/sub message, a caller's callback) is handled on {@code events} instead, and the outcome
 * completes there too.
 */
public abstract class SteppedAcquisition {

    // not synchronized: a virtual thread that enters never pins its carrier
    protected final ReentrantLock lock = new ReentrantLock();
    // the client's event executors (not I/O threads): where events that arrive on an I/O thread are handled
    private final Executor events;
    private final CompletableFuture<Hold> outcome = new CompletableFuture<>();
    // set by the thread that starts the acquisition, before its first step; told once, by settle()
    private LockEvents.Wait observed;
    // all guarded by lock
    private boolean decided;
    private boolean settled;
    private Hold acquired;
    private RuntimeException failure;

    /** @param events the client's event executors, which are not Netty I/O threads */
    protected SteppedAcquisition(Executor events) {
        this.events = events;
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
        start(waitNanos, forever);
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return outcome.get();
                } catch (InterruptedException e) {
                    if (interruptible && cancel()) {
                        throw e;
                    }
                    // not interruptible, or the outcome is already there: take it
                    interrupted = true;
                } catch (ExecutionException e) {
                    throw rethrown(e.getCause());
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

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
        observed = started();
        step(() -> begin(waitNanos, forever));
    }

    /**
     * Gives up: undoes what is in flight and decides the outcome as null. On a Netty I/O thread the handling runs
     * on the event executors while this thread waits for it ({@link IoThreads#offIo}).
     *
     * @return false if the outcome was already decided
     */
    public final boolean cancel() {
        return IoThreads.offIo(events, this::cancelStep);
    }

    /** The handling of {@link #cancel}, as one {@link #step}, in a thread that is not an I/O thread. */
    protected abstract boolean cancelStep();

    /** Called once, in the starting thread, before the first step: returns who hears of the outcome. */
    protected abstract LockEvents.Wait started();

    /** The first step: takes the wait as asked and sends the first attempt. Lock held. */
    protected abstract void begin(long waitNanos, boolean forever);

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
     * thread, hands both to the event executors and returns at once.
     */
    protected final void step(Runnable handling) {
        if (IoThreads.isCurrent()) {
            try {
                events.execute(() -> stepHere(handling));
                return;
            } catch (RejectedExecutionException e) {
                // the executors shut down only with the client, whose connections are closed by then: nothing
                // sent here can be written any more
            }
        }
        stepHere(handling);
    }

    private void stepHere(Runnable handling) {
        lock.lock();
        try {
            handling.run();
        } catch (RuntimeException e) {
            if (!decided) {
                try {
                    handlingFailed(e);
                } catch (RuntimeException also) {
                    e.addSuppressed(also);
                } finally {
                    if (!decided) {
                        decide(null, e);
                    }
                }
            }
        } finally {
            lock.unlock();
        }
        settle();
    }

    /** Whether the outcome is decided. Lock held. */
    protected final boolean isDecided() {
        return decided;
    }

    /** Decides the outcome: {@code hold}, or null, or {@code error} when not null. Lock held; at most once. */
    protected final void decide(Hold hold, RuntimeException error) {
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
        ended();
        // the observer hears of the outcome before anyone waiting for it does
        if (error != null) {
            observed.failed(error);
            outcome.completeExceptionally(error);
        } else {
            if (hold == null) {
                // the wait ended, or it was cancelled or interrupted
                observed.timedOut();
            } else {
                observed.acquired(hold);
            }
            outcome.complete(hold);
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
