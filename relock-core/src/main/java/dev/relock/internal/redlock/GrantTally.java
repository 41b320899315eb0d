package dev.relock.internal.redlock;

import dev.relock.internal.engine.Ticker;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The grants on release to one waiting writer's latest attempt, by node: the token each node gave, 0 where none did
 * (yet). A waiting writer's refused attempt leaves a grant offer on each node (acquire.lua): a release that frees a
 * node while the writer heads its queue makes it the holder there for that attempt, and says so with the token
 * ({@link ReleaseSignals.Grants}). Grants for the latest attempt from a majority of the nodes win as that attempt
 * would have, with no attempt of its own (see {@link RedlockAcquisition}).
 *
 * <p>Which grants count ({@link #offer}): only those for the latest attempt, only from nodes that refused it (the
 * clean-up of a writer that goes on waiting leaves those nodes alone), and none once the tally is void: a clean-up
 * that may undo them was sent (the writer stops waiting, or won too late). Grants that do not reach a majority soon
 * after the first ({@link #othersAwaitedUntil}) are taken by an attempt instead, which finds the lock its own where
 * it was granted. Times are readings of the client's {@link Ticker}. Not thread-safe: guarded by the acquisition's
 * lock.
 */
final class GrantTally {

    /** What became of a grant offered to the tally. */
    enum Offer {
        /** Counted. */
        COUNTED,
        /** The node's reply to the attempt is not in yet: the grant is to be offered again once it is. */
        AFTER_REPLY,
        /** It does not count (see {@link GrantTally}), or was counted already. */
        IGNORED
    }

    private static final long GRANT_WAIT_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    private final Ticker ticker;
    private final long[] tokens;
    // the attempt whose grants count, null until the first
    private Attempt latest;
    private int count;
    // when the first grant of the latest attempt came (ticker)
    private long firstAt;
    private boolean isVoid;

    GrantTally(int nodeCount, Ticker ticker) {
        this.tokens = new long[nodeCount];
        this.ticker = ticker;
    }

    /** Forgets every grant, and is no longer void: {@code attempt} was sent, and only its grants count. */
    void reset(Attempt attempt) {
        Arrays.fill(tokens, 0);
        count = 0;
        isVoid = false;
        latest = attempt;
    }

    /** A clean-up that may undo the latest attempt's grants was sent: none of them counts any more. */
    void makeVoid() {
        isVoid = true;
    }

    boolean isVoid() {
        return isVoid;
    }

    /** Node {@code node} granted attempt {@code attemptId} the lock on release, with {@code token} (positive). */
    Offer offer(int node, long token, String attemptId) {
        if (isVoid || latest == null || !attemptId.equals(latest.id()) || tokens[node] != 0) {
            return Offer.IGNORED;
        }
        CompletableFuture<List<Object>> reply = latest.replies().get(node);
        if (!reply.isDone()) {
            return Offer.AFTER_REPLY;
        }
        if (!AttemptAnswers.isRefusal(reply)) {
            // failed there (it cannot have said yes and queued for a grant): the clean-up after it undoes it
            return Offer.IGNORED;
        }
        if (count++ == 0) {
            firstAt = ticker.nanoTime();
        }
        tokens[node] = token;
        return Offer.COUNTED;
    }

    /** How many nodes granted the latest attempt. */
    int count() {
        return count;
    }

    /**
     * Until when (ticker) the other nodes' grants are waited for, once one came: a release goes to every node at
     * once, so its grants come within a few milliseconds of each other, or the nodes passed the lock to different
     * writers (their queues ordered them differently), which only attempts sort out. At most {@code turnNanos}, a
     * release's turn.
     */
    long othersAwaitedUntil(long turnNanos) {
        return firstAt + Math.min(GRANT_WAIT_NANOS, turnNanos);
    }

    /** The largest token granted, 0 if none. */
    long largestToken() {
        long largest = 0;
        for (long token : tokens) {
            largest = Math.max(largest, token);
        }
        return largest;
    }

    /** How many nodes granted the largest token. */
    int agreeing() {
        long largest = largestToken();
        int agreeing = 0;
        for (long token : tokens) {
            if (token != 0 && token == largest) {
                agreeing++;
            }
        }
        return agreeing;
    }

    @Override
    public String toString() {
        return count + (isVoid ? " (void)" : "");
    }
}
