package dev.relock.internal.single;

import dev.relock.RelockException;
import dev.relock.internal.engine.IoThreads;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A wait of this client that blocks no thread (a count-down latch's, a condition's): a state machine whose events
 * (replies, wake-up messages, timers, a stop) are handled one at a time, and whose result, a future, completes once.
 *
 * <p>Invariants. Every handling runs under {@link #lock} and never on a Netty I/O thread, where a command it sends would
 * overtake those other threads queued on that loop ({@link IoThreads}): an event that arrives on one is handed to the
 * client's event executors. An event that arrives while a handling runs waits in the inbox and is handled after it,
 * by the thread that ran it, so no handling ever runs inside another (a reply completed at once, a wake-up told while
 * subscribing). After {@link #end} no handling runs any more. The result is completed after the lock is released, so no
 * caller's callback runs under it. Completing the result from outside (a cancel) is an event too: {@link #stopped}.
 *
 * <p>Threads: events come from Lettuce I/O threads (replies, messages), the event executors (timers, hand-offs), the
 * thread that starts the wait, the one that stops it and the one that closes the client. A thread other than an I/O
 * thread that brings an event may wait for the lock while another thread handles one (handlings send, never wait).
 *
 * @param <T> what the wait ends with
 */
abstract class SerialWait<T> {

    private static final Logger log = LoggerFactory.getLogger(SerialWait.class);

    // not synchronized: a virtual thread that enters never pins its carrier
    protected final ReentrantLock lock = new ReentrantLock();
    // the client waiting: its event executors (not I/O threads) run the timers and hand-offs
    private final SingleServerEngine engine;
    private final ConcurrentLinkedQueue<Runnable> inbox = new ConcurrentLinkedQueue<>();
    private final CompletableFuture<T> result = new CompletableFuture<>();
    // guarded by lock
    private boolean ended;
    private boolean settled;
    private T value;
    private Throwable failure;

    SerialWait(SingleServerEngine engine) {
        this.engine = engine;
    }

    /**
     * The wait's result. Completing it from outside (cancelling it) stops the wait ({@link #stopped} with
     * "cancelled"); its callbacks run on the thread that completes it: an event executor, the thread that stops the
     * wait or closes the client, or the starting thread when the outcome is known at once.
     */
    final CompletableFuture<T> result() {
        return result;
    }

    /** Starts the wait: {@code first} is its first handling. Call once, from the thread that asks for the wait. */
    final void begin(Runnable first) {
        result.whenComplete((done, error) -> stop("cancelled"));
        step(first);
    }

    /** Asks the wait to end early ({@code why}: "interrupted", "cancelled"); see {@link #stopped}. Any thread. */
    final void stop(String why) {
        step(() -> stopped(why));
    }

    /** A stop was asked for; what it does depends on where the wait is. Lock held, not ended. */
    protected abstract void stopped(String why);

    /** Releases what the wait holds (registrations, timers), once, as it ends. Lock held. */
    protected abstract void cleanUp();

    /** The wait's name, for a log line. */
    protected abstract String describe();

    /** Handles an event: here, or on an event executor when called on a Netty I/O thread; after the one running. */
    protected final void step(Runnable handling) {
        inbox.add(handling);
        if (IoThreads.isCurrent()) {
            engine.handOff(this::drain);
        } else {
            drain();
        }
    }

    /**
     * Handles {@code reply}'s outcome as an event, never before the handling that sent it is over (a reply that came
     * at once waits in the inbox).
     */
    protected final <R> void onReply(CompletableFuture<R> reply, BiConsumer<R, Throwable> handling) {
        reply.whenComplete((answer, error) -> step(() -> handling.accept(answer,
                error instanceof CompletionException && error.getCause() != null ? error.getCause() : error)));
    }

    /** Now, on the client's ticker: the clock of every deadline and timer of the wait. */
    protected final long nanoTime() {
        return engine.core.ticker().nanoTime();
    }

    /**
     * Arms a timer that handles {@code handling} as an event at {@code atNanos} ({@link #nanoTime()}).
     *
     * @return the timer, to cancel; null if the executors are shut down (the client closed): nothing is armed
     */
    protected final ScheduledFuture<?> schedule(Runnable handling, long atNanos) {
        try {
            return engine.timer().schedule(() -> step(handling), Math.max(0, atNanos - nanoTime()),
                    TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            return null;
        }
    }

    /** Cancels {@code timer} if there is one; returns null, for the field it was kept in. */
    protected static ScheduledFuture<?> cancel(ScheduledFuture<?> timer) {
        if (timer != null) {
            timer.cancel(false);
        }
        return null;
    }

    /** Ends the wait with {@code value}, or with {@code failure} when not null. Lock held; at most once. */
    protected final void end(T value, Throwable failure) {
        ended = true;
        this.value = value;
        this.failure = failure;
        cleanUp();
    }

    /** Whether the wait has ended. Lock held. */
    protected final boolean hasEnded() {
        return ended;
    }

    /**
     * Handles the inbox, then completes the result if the wait ended. Takes the lock at least once, so an event
     * another thread took from the inbox has been handled when this returns (a stop is over before its caller goes
     * on). Inside a handling (the lock held here) it returns at once: the outer drain handles what came.
     */
    private void drain() {
        if (lock.isHeldByCurrentThread()) {
            return;
        }
        do {
            lock.lock();
            try {
                for (Runnable handling = inbox.poll(); handling != null; handling = inbox.poll()) {
                    handle(handling);
                }
            } finally {
                lock.unlock();
            }
            settle();
        } while (!inbox.isEmpty());
    }

    /**
     * One handling; a failure in it (a bug, or the JVM out of memory or stack) ends the wait with that failure, and is
     * logged, not thrown: the thread that brought the event goes on. Lock held.
     */
    private void handle(Runnable handling) {
        if (ended) {
            return;
        }
        try {
            handling.run();
        } catch (RuntimeException | Error e) {
            if (ended) {
                log.warn("{}: a handling failed after the wait ended", describe(), e);
                return;
            }
            log.error("{}: a handling failed; the wait ends with its failure. This is a bug in relock, please report"
                    + " it", describe(), e);
            try {
                end(null, e instanceof RuntimeException ? e
                        : new RelockException(describe() + " failed on an internal error: " + e, e));
            } catch (RuntimeException also) {
                e.addSuppressed(also);
            }
        }
    }

    /** Completes the result once the wait ended; without the lock, so callbacks never run under it. */
    private void settle() {
        T endedWith;
        Throwable endedBy;
        lock.lock();
        try {
            if (!ended || settled) {
                return;
            }
            settled = true;
            endedWith = value;
            endedBy = failure;
        } finally {
            lock.unlock();
        }
        if (endedBy != null) {
            result.completeExceptionally(endedBy);
        } else {
            result.complete(endedWith);
        }
    }

    /** A wait's failure, to throw in the thread that waited for its result. */
    static RuntimeException rethrown(Throwable failure) {
        if (failure instanceof RuntimeException runtime) {
            return runtime;
        }
        if (failure instanceof Error error) {
            throw error;
        }
        return new RelockException("the wait failed: " + failure, failure);
    }

    /** The failure of a wait that was stopped: its result was cancelled, or its thread interrupted. */
    protected static CancellationException stoppedBy(String why, String what) {
        return new CancellationException(what + ": " + why);
    }
}
