package dev.relock.internal.engine;

import java.time.Duration;

/**
 * Duration arithmetic the acquiring methods share.
 *
 * <p>Public because the single-server engine, in its own package, uses it.
 */
public final class Durations {

    /** The duration in nanoseconds, clamped to the range of a long instead of overflowing. */
    public static long saturatedNanos(Duration duration) {
        try {
            return duration.toNanos();
        } catch (ArithmeticException e) {
            return duration.isNegative() ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
    }

    private Durations() {}
}
