package dev.relock.internal.engine;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/**
 * The handlings of one acquisition's events that arrived on a Netty I/O thread, where none may run
 * ({@link IoThreads}), and who runs them: the thread blocked in {@link SteppedAcquisition#run} while one is (it waits
 * anyway, and is spared a hand-over to another thread and back), else the client's event executors.
 *
 * <p>Invariants. Handlings run in the order they were added, by one runner at a time, never on an I/O thread. The
 * runner is chosen in one atomic value, {@link #drains}, so that the waiter leaving and a runner being chosen cannot
 * cross: a waiter that leaves first drains what it was asked to, and every event added after that asks the executors.
 * Nothing here waits for a handling; the handlings themselves take the acquisition's lock.
 */
final class EventInbox {

    private static final int WAITING = 1;
    private static final int WAITER_ASKED = 2;
    private static final int EXECUTORS_ASKED = 4;

    private final ConcurrentLinkedQueue<Runnable> handlings = new ConcurrentLinkedQueue<>();
    // who drains: WAITING (a thread is blocked in run(), never an I/O thread) plus at most one of WAITER_ASKED and
    // EXECUTORS_ASKED, set from when that runner is asked to drain until it has drained
    private final AtomicInteger drains = new AtomicInteger();
    // the thread blocked in run(), set before WAITING is; read only by whoever asked it
    private volatile Thread waiter;
    // the client's event executors (not I/O threads)
    private final Executor events;
    // runs one handling in the calling thread (SteppedAcquisition.stepHere); an Error it throws has decided the outcome
    private final Consumer<Runnable> handleHere;

    EventInbox(Executor events, Consumer<Runnable> handleHere) {
        this.events = events;
        this.handleHere = handleHere;
    }

    /** Adds a handling, and asks a runner to drain unless one is asked already. Any thread; never blocks. */
    void add(Runnable handling) {
        handlings.add(handling);
        startDrain();
    }

    /** The calling thread, never an I/O thread, waits in run() from now on, and drains when asked. */
    void enter(Thread self) {
        waiter = self;
        drains.getAndUpdate(state -> state | WAITING);
    }

    /** Whether a thread waits in run() (and has not left). */
    boolean hasWaiter() {
        return (drains.get() & WAITING) != 0;
    }

    /** The thread that waits in run(); meaningful only while {@link #hasWaiter}. */
    Thread waiter() {
        return waiter;
    }

    /** Drains, if the waiter was asked to. Waiter only. */
    void drainIfAsked() {
        if ((drains.get() & WAITER_ASKED) != 0) {
            drain(WAITER_ASKED);
        }
    }

    /** The waiter leaves run(): it drains first what it was asked to, and from then on the executors are asked. */
    void leave() {
        while (true) {
            int state = drains.get();
            if ((state & WAITING) == 0) {
                return; // run() on an I/O thread: never the waiter
            }
            if ((state & WAITER_ASKED) != 0) {
                drain(WAITER_ASKED);
            } else if (drains.compareAndSet(state, state & ~WAITING)) {
                return;
            }
        }
    }

    /**
     * Handles every event, in order, then lets the next event ask a runner again. Only the runner {@link #startDrain}
     * asked ({@code asked}) runs it. A handling that throws an Error has decided the outcome first: it does not stop
     * the drain, nor reach the waiter's caller.
     */
    private void drain(int asked) {
        for (Runnable handling = handlings.poll(); handling != null; handling = handlings.poll()) {
            try {
                handleHere.accept(handling);
            } catch (Error e) {
                // logged by the handling, with the outcome decided first
            }
        }
        drains.getAndUpdate(state -> state & ~asked);
        // a handling added after the last poll, whose startDrain found this runner still asked
        if (!handlings.isEmpty()) {
            startDrain();
        }
    }

    /** Asks a runner to drain, unless one is asked already: the waiter if there is one, else the executors. */
    private void startDrain() {
        int state;
        int asked;
        do {
            state = drains.get();
            if ((state & (WAITER_ASKED | EXECUTORS_ASKED)) != 0) {
                return;
            }
            asked = (state & WAITING) != 0 ? WAITER_ASKED : EXECUTORS_ASKED;
        } while (!drains.compareAndSet(state, state | asked));
        if (asked == WAITER_ASKED) {
            // it drains before it parks again, and before it leaves run() (leave())
            LockSupport.unpark(waiter);
            return;
        }
        try {
            events.execute(() -> drain(EXECUTORS_ASKED));
        } catch (RejectedExecutionException e) {
            // the executors shut down only with the client, whose connections are closed by then: nothing sent here
            // can be written any more
            drain(EXECUTORS_ASKED);
        }
    }
}
