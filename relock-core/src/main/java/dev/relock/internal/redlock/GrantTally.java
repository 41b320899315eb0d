package dev.relock.internal.redlock;

import java.util.Arrays;

/**
 * The grants on release to one waiting writer's latest attempt, by node: the token each node gave, 0 where none did
 * (yet). Which grants count, and when the tally is void, is the acquisition's to decide ({@link RedlockAcquisition});
 * this only counts. Not thread-safe: guarded by the acquisition's lock.
 */
final class GrantTally {

    private final long[] tokens;
    private int count;
    // when the first grant of the latest attempt came (System.nanoTime())
    private long firstAt;

    GrantTally(int nodeCount) {
        this.tokens = new long[nodeCount];
    }

    /** Forgets every grant: a new attempt was sent. */
    void reset() {
        Arrays.fill(tokens, 0);
        count = 0;
    }

    /** Whether node {@code node} granted the latest attempt. */
    boolean has(int node) {
        return tokens[node] != 0;
    }

    /** Node {@code node} granted the latest attempt with {@code token} (positive). */
    void add(int node, long token) {
        if (count++ == 0) {
            firstAt = System.nanoTime();
        }
        tokens[node] = token;
    }

    /** How many nodes granted the latest attempt. */
    int count() {
        return count;
    }

    /** When the first grant came (System.nanoTime()); only while {@link #count} is positive. */
    long firstAt() {
        return firstAt;
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
}
