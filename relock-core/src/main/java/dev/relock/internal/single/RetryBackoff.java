package dev.relock.internal.single;

import java.util.concurrent.TimeUnit;

/**
 * The back-off between tries of something Redis could not answer (an acquisition, a subscription, a latch or
 * condition waiter's look): 50 ms, doubling up to 2 s.
 */
final class RetryBackoff {

    static final long FIRST_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
    static final long MAX_NANOS = TimeUnit.SECONDS.toNanos(2);

    private RetryBackoff() {
    }

    /** The wait before the next try, after waiting {@code previousNanos} before the last one (0: none yet). */
    static long after(long previousNanos) {
        return previousNanos == 0 ? FIRST_NANOS : Math.min(MAX_NANOS, previousNanos * 2);
    }
}
