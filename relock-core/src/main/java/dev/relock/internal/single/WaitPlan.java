package dev.relock.internal.single;

import dev.relock.internal.engine.Ticker;
import java.util.concurrent.TimeUnit;

/**
 * When one {@link Acquisition} tries next, and when its wait is over, on the client's {@link Ticker}: the wait as
 * asked (without a deadline, or until one), the check a "you are next" message asked for, the back-off while Redis is
 * unreachable ({@link RetryBackoff}), and the generation of the timer each plan arms.
 *
 * <p>Invariants. No planned time is after the wait's deadline: the last attempt of a wait is sent by its deadline, so
 * whichever attempt comes last decides. A check asked for comes before any later plan, until the next attempt is
 * sent. Each plan is a new generation, so a timer that fires after it was replaced is told from the one still wanted.
 * The back-off starts over after a "not acquired". Guarded by the acquisition's lock; {@link #begin} is called by its
 * first step.
 */
final class WaitPlan {

    private final Ticker ticker;
    // the wait as asked: without a deadline, or until deadline
    private boolean forever;
    private long deadline;
    // a "you are next" message asked for an attempt by checkBy
    private boolean hasCheckBy;
    private long checkBy;
    private long generation;
    private long backoff;

    WaitPlan(Ticker ticker) {
        this.ticker = ticker;
    }

    /** The wait as asked: without a deadline ({@code forever}), or until {@code deadline}. */
    void begin(boolean forever, long deadline) {
        this.forever = forever;
        this.deadline = deadline;
    }

    /** Now, on the client's ticker. */
    long now() {
        return ticker.nanoTime();
    }

    /** Whether the wait's deadline has passed at {@code now}. */
    boolean isOver(long now) {
        return !forever && now - deadline >= 0;
    }

    /** Whether the wait's deadline has passed. */
    boolean isOver() {
        return isOver(ticker.nanoTime());
    }

    /** {@code at}, or the wait's deadline if that comes first. */
    long byDeadline(long at) {
        return forever || at - deadline < 0 ? at : deadline;
    }

    /** What an attempt tells the acquire script it waits, in ms: 0 for a single try ({@code queued} false). */
    long scriptWaitMillis(boolean queued) {
        if (!queued) {
            return 0;
        }
        return forever ? ModeScripts.WAIT_FOREVER_MILLIS : Math.max(1, ceilMillis(deadline - ticker.nanoTime()));
    }

    /**
     * After a "not acquired" handled at {@code now}: just after the holder's lease, which runs {@code retryMillis}
     * more, has run out in Redis (+1 ms). Redis answered, so the back-off starts over.
     */
    long afterLease(long now, long retryMillis) {
        backoff = 0;
        return byDeadline(now + TimeUnit.MILLISECONDS.toNanos(retryMillis + 1));
    }

    /** After a try Redis could not answer: when to try again, after a back-off that doubles ({@link #backoffNanos}). */
    long afterBackoff() {
        backoff = RetryBackoff.after(backoff);
        return byDeadline(ticker.nanoTime() + backoff);
    }

    /** The latest back-off, 0 after a reply. */
    long backoffNanos() {
        return backoff;
    }

    /** A check is asked for within {@code nanos}: returns by when, and keeps the earliest asked for. */
    long checkWithin(long nanos) {
        long by = ticker.nanoTime() + nanos;
        if (!hasCheckBy || by - checkBy < 0) {
            checkBy = by;
            hasCheckBy = true;
        }
        return by;
    }

    /** An attempt is sent: the checks asked for before it are done. */
    void attempted() {
        hasCheckBy = false;
    }

    /** Whether a check asked for comes before {@code at}: the timer is then armed for it, on time. */
    boolean checkBefore(long at) {
        return hasCheckBy && checkBy - at < 0;
    }

    /** The check asked for; meaningful when {@link #checkBefore} some time. */
    long checkBy() {
        return checkBy;
    }

    /** A new timer is armed: its generation. */
    long nextGeneration() {
        return ++generation;
    }

    /** Whether a timer of {@code armed} generation is the one still wanted. */
    boolean isCurrent(long armed) {
        return armed == generation;
    }

    @Override
    public String toString() {
        return "backoff=" + backoff;
    }

    private static long ceilMillis(long nanos) {
        return (nanos + 999_999) / 1_000_000;
    }
}
