package dev.relock.internal.redlock;

import dev.relock.internal.engine.Ticker;
import dev.relock.internal.engine.WheelTimers;
import io.netty.util.Timeout;
import io.netty.util.Timer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;

/**
 * The replies of every node to one command sent to all of them at once, counted as they come.
 * The poll is decided when a majority said yes, when a majority can no longer say yes, or when
 * every node answered (or failed).
 *
 * <p>Threads: replies are counted on Lettuce's event-loop threads, under this object's monitor;
 * the thread that sent the command waits in {@link #awaitDecision} or chains on
 * {@link #decided()}. The counts only grow; once decided a poll stays decided.
 *
 * @param <T> a node's reply
 */
final class Poll<T> {

    private final List<CompletableFuture<T>> replies;
    private final List<RedlockNode> nodes;
    private final int majority;
    private final Predicate<T> isYes;
    // the client's clock, which the waits in awaitDecision and awaitAll read
    private final Ticker ticker;
    private final CompletableFuture<Void> decided = new CompletableFuture<>();
    // completed once every reply is counted: not allOf(replies), which can complete before the last reply's count
    // has run (a future runs its dependents in no set order)
    private final CompletableFuture<Void> counted = new CompletableFuture<>();

    // guarded by this
    private int yes;
    private int no;
    private int failed;
    // set when a wait for this poll ran out before the poll was decided
    private volatile boolean waitRanOut;

    Poll(List<RedlockNode> nodes, List<CompletableFuture<T>> replies, int majority, Predicate<T> isYes,
            Ticker ticker) {
        this.nodes = nodes;
        this.replies = replies;
        this.majority = majority;
        this.isYes = isYes;
        this.ticker = ticker;
        for (CompletableFuture<T> reply : replies) {
            reply.whenComplete(this::count);
        }
    }

    /** Every node's reply, by node, answered or not. */
    List<CompletableFuture<T>> replies() {
        return replies;
    }

    private synchronized void count(T value, Throwable error) {
        if (error != null) {
            failed++;
        } else if (isYes.test(value)) {
            yes++;
        } else {
            no++;
        }
        int pending = replies.size() - yes - no - failed;
        if (yes >= majority || yes + pending < majority || pending == 0) {
            decided.complete(null);
        }
        if (pending == 0) {
            counted.complete(null);
        }
    }

    /** Completes when the poll is decided; never exceptionally. */
    CompletableFuture<Void> decided() {
        return decided;
    }

    /** Completes once every node's reply is in or failed; never exceptionally. */
    CompletableFuture<Void> counted() {
        return counted;
    }

    /**
     * Completes when the poll is decided or {@code timeoutNanos} passed, whichever comes first;
     * never exceptionally. No thread waits for it: the timeout is a task on {@code timer}, which waits on
     * {@code wheel} when it is far ({@link WheelTimers}), as Lettuce's own command timeouts do.
     */
    CompletableFuture<Void> decidedWithin(long timeoutNanos, ScheduledExecutorService timer, Timer wheel) {
        CompletableFuture<Void> within = new CompletableFuture<>();
        decided.thenRun(() -> within.complete(null));
        if (within.isDone()) {
            return within;
        }
        Runnable ranOut = () -> {
            if (!decided.isDone()) {
                waitRanOut = true;
            }
            within.complete(null);
        };
        try {
            if (timeoutNanos >= WheelTimers.FAR_NANOS) {
                Timeout timeout = WheelTimers.onWheel(wheel, timer, ranOut, timeoutNanos);
                within.thenRun(timeout::cancel);
            } else {
                ScheduledFuture<?> timeout = timer.schedule(ranOut, timeoutNanos, TimeUnit.NANOSECONDS);
                within.thenRun(() -> timeout.cancel(false));
            }
        } catch (RejectedExecutionException | IllegalStateException e) {
            // the timer shuts down only with the client: nothing more will be counted
            within.complete(null);
        }
        return within;
    }

    /**
     * Waits in the calling thread until the poll is decided or {@code timeoutNanos} passed. An
     * interrupt does not cut the wait short (the commands are out; their outcome matters); the
     * interrupt status is restored before returning.
     */
    void awaitDecision(long timeoutNanos) {
        await(decided, timeoutNanos);
    }

    /** Waits as {@link #awaitDecision}, but until every node answered or failed. */
    void awaitAll(long timeoutNanos) {
        await(counted, timeoutNanos);
    }

    private void await(CompletableFuture<?> what, long timeoutNanos) {
        long deadline = ticker.nanoTime() + timeoutNanos;
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    what.get(Math.max(0, deadline - ticker.nanoTime()), TimeUnit.NANOSECONDS);
                    return;
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (TimeoutException e) {
                    waitRanOut = true;
                    return;
                } catch (ExecutionException e) {
                    return;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    synchronized boolean won() {
        return yes >= majority;
    }

    synchronized int yes() {
        return yes;
    }

    synchronized int no() {
        return no;
    }

    /** How many nodes failed to answer (an error or a timeout reported by Lettuce). */
    synchronized int failed() {
        return failed;
    }

    /** How many nodes answered, yes or no. */
    synchronized int answered() {
        return yes + no;
    }

    /** The reply of node {@code node} (an index into the client's nodes), or null if none came. */
    T answer(int node) {
        CompletableFuture<T> reply = replies.get(node);
        return reply.isDone() && !reply.isCompletedExceptionally() ? reply.join() : null;
    }

    /** The replies that came, yes and no, in node order. */
    List<T> answers() {
        List<T> answers = new ArrayList<>();
        for (CompletableFuture<T> reply : replies) {
            if (reply.isDone() && !reply.isCompletedExceptionally()) {
                answers.add(reply.join());
            }
        }
        return answers;
    }

    /** One line per node that failed or has not answered. */
    List<String> failures() {
        List<String> failures = new ArrayList<>();
        for (int i = 0; i < replies.size(); i++) {
            CompletableFuture<T> reply = replies.get(i);
            if (!reply.isDone()) {
                failures.add("Redis at " + nodes.get(i).address + (waitRanOut
                        ? " did not answer in time" : " was not waited for (a majority was out of reach)"));
            } else if (reply.isCompletedExceptionally()) {
                try {
                    reply.join();
                } catch (RuntimeException e) {
                    failures.add(nodes.get(i).describe(e));
                }
            }
        }
        return failures;
    }
}
