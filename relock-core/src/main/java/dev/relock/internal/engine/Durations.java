package dev.relock.internal.engine;

import java.time.Duration;
import java.util.Objects;

/**
 * Duration arithmetic the acquiring and extending methods share.
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

    /**
     * A lease given as a Duration, in milliseconds: at least 1 (a positive lease shorter than a millisecond still
     * leases), saturated at Long.MAX_VALUE.
     *
     * @param of what the lease is of, for the message: "lock 'invoices'"
     * @throws NullPointerException if lease is null
     * @throws IllegalArgumentException if lease is zero or negative
     */
    public static long leaseMillis(Duration lease, String of) {
        Objects.requireNonNull(lease, "lease");
        if (lease.isZero() || lease.isNegative()) {
            throw new IllegalArgumentException("lease of " + of + " must be positive: " + lease);
        }
        long nanos = saturatedNanos(lease);
        return nanos == Long.MAX_VALUE ? Long.MAX_VALUE / 1_000_000 : Math.max(1, nanos / 1_000_000);
    }

    private Durations() {}
}
