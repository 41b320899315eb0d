package dev.relock.internal.redlock;

import dev.relock.internal.engine.Ticker;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.LongUnaryOperator;

/**
 * When one Redlock acquisition's next attempt goes out after an attempt that did not win, read on the client's
 * {@link Ticker}. The acquisition ({@link RedlockAcquisition}) says which case it is in; this says when:
 * <ul>
 *   <li>a release named another waiting writer's turn: once that turn is over, plus a jitter ({@link #afterTurn});</li>
 *   <li>a release named nobody: after a jitter, since every waiter heard the same release ({@link #afterJitter});</li>
 *   <li>nobody holds a majority (competitors split the nodes): after a random back-off whose bound doubles with
 *       each split in a row, from 10 ms up to 200 ms, so competing clients do not collide forever
 *       ({@link #afterSplit});</li>
 *   <li>fewer than a majority answered: after a back-off that doubles with each such attempt in a row, from 50 ms up
 *       to 2 s ({@link #afterUnavailable});</li>
 *   <li>one owner holds a majority: when enough of its leases have run out ({@link #in}, with
 *       {@link AttemptAnswers#retryNanos}).</li>
 * </ul>
 * Times are {@link Ticker#nanoTime()} readings. Not thread-safe: guarded by the acquisition's lock.
 */
final class WaitPlan {

    /** The bound of the random spread after a release, so that the waiters that heard it do not try at once. */
    static final long JITTER_NANOS = TimeUnit.MILLISECONDS.toNanos(5);
    static final long FIRST_SPLIT_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    static final long MAX_SPLIT_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(200);
    static final long FIRST_UNAVAILABLE_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
    static final long MAX_UNAVAILABLE_BACKOFF_NANOS = TimeUnit.SECONDS.toNanos(2);

    private final Ticker ticker;
    // a value from 0 (inclusive) to its positive argument (exclusive)
    private final LongUnaryOperator random;
    // splits in a row, since the last attempt that found a holder or a turn
    private int splits;
    // the back-off after the latest attempt that fewer than a majority answered, 0 once one was answered
    private long unavailableBackoff;

    /** @param random a value from 0 (inclusive) to its positive argument (exclusive) */
    WaitPlan(Ticker ticker, LongUnaryOperator random) {
        this.ticker = ticker;
        this.random = random;
    }

    /** A plan whose back-offs and jitters are drawn from {@link ThreadLocalRandom}. */
    static WaitPlan of(Ticker ticker) {
        return new WaitPlan(ticker, bound -> ThreadLocalRandom.current().nextLong(bound));
    }

    /** Now, on the ticker. */
    long now() {
        return ticker.nanoTime();
    }

    /** {@code nanos} from now. */
    long in(long nanos) {
        return ticker.nanoTime() + nanos;
    }

    /** When another writer's turn of {@code turnNanos}, which begins now, is over, plus a jitter. */
    long afterTurn(long turnNanos) {
        return ticker.nanoTime() + turnNanos + random.applyAsLong(JITTER_NANOS);
    }

    /** Now plus a jitter. */
    long afterJitter() {
        return ticker.nanoTime() + random.applyAsLong(JITTER_NANOS);
    }

    /** Whether a wait until {@code at} ends no later than a turn of {@code turnNanos} beginning now would. */
    boolean endsWithinTurn(long at, long turnNanos) {
        return at - ticker.nanoTime() <= turnNanos + JITTER_NANOS;
    }

    /** After one more split in a row: a random back-off below a bound that doubles with each, 10 to 200 ms. */
    long afterSplit() {
        long bound = Math.min(MAX_SPLIT_BACKOFF_NANOS, FIRST_SPLIT_BACKOFF_NANOS << Math.min(splits++, 5));
        return ticker.nanoTime() + random.applyAsLong(bound);
    }

    /** An attempt found a holder of a majority or this writer's turn: the splits in a row are over. */
    void holderFound() {
        splits = 0;
    }

    /** After one more attempt in a row that fewer than a majority answered: a back-off that doubles, 50 ms to 2 s. */
    long afterUnavailable() {
        unavailableBackoff = unavailableBackoff == 0 ? FIRST_UNAVAILABLE_BACKOFF_NANOS
                : Math.min(MAX_UNAVAILABLE_BACKOFF_NANOS, unavailableBackoff * 2);
        return ticker.nanoTime() + unavailableBackoff;
    }

    /** A majority answered an attempt: the next unavailable back-off starts from the first again. */
    void answered() {
        unavailableBackoff = 0;
    }

    /** The latest unavailable back-off, 0 once a majority answered. */
    long unavailableBackoffNanos() {
        return unavailableBackoff;
    }

    @Override
    public String toString() {
        return "splits=" + splits + ", unavailableBackoffMs=" + TimeUnit.NANOSECONDS.toMillis(unavailableBackoff);
    }
}
