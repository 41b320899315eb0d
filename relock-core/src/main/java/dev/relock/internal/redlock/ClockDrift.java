package dev.relock.internal.redlock;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * How much of a Redlock lease this client does not count on: the servers' clocks may run faster
 * than this JVM's, so a key may expire there before the lease has passed here.
 *
 * <p>Public because the builder, in the API package, takes it from the user's settings.
 *
 * @param factorOfLease the share of the lease, 0 to 0.5
 * @param fixedNanos a fixed allowance on top, in nanoseconds
 */
public record ClockDrift(double factorOfLease, long fixedNanos) {

    /**
     * 1% of the lease plus 50 ms: the same allowance as a single-server client's lease keeper, whose
     * fixed part also covers the renewer thread waking late on a loaded machine.
     */
    public static final ClockDrift DEFAULT = new ClockDrift(0.01, TimeUnit.MILLISECONDS.toNanos(50));

    /**
     * @throws IllegalArgumentException if the factor is not within 0..0.5 or fixed is negative
     */
    public static ClockDrift of(double factorOfLease, Duration fixed) {
        Objects.requireNonNull(fixed, "fixed clock drift");
        if (!(factorOfLease >= 0 && factorOfLease <= 0.5)) {
            throw new IllegalArgumentException("clock drift factor must be within 0..0.5: " + factorOfLease);
        }
        if (fixed.isNegative()) {
            throw new IllegalArgumentException("fixed clock drift must not be negative: " + fixed);
        }
        return new ClockDrift(factorOfLease, fixed.toNanos());
    }

    /** The allowance for a lease of {@code leaseMillis}, in nanoseconds. */
    long nanosFor(long leaseMillis) {
        return (long) (TimeUnit.MILLISECONDS.toNanos(leaseMillis) * factorOfLease) + fixedNanos;
    }

    /** How long a lease of {@code leaseMillis} can be counted on, from the moment its request was sent. */
    long validNanos(long leaseMillis) {
        return TimeUnit.MILLISECONDS.toNanos(leaseMillis) - nanosFor(leaseMillis);
    }
}
