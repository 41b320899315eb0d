package dev.relock.testredis;

import java.time.Duration;

/**
 * Timeouts for tests, stretched on slow machines by one system property.
 *
 * <p>{@code -Drelock.test.timeout.factor=3} makes every timeout this fixture uses (server start, stop,
 * admin commands) three times longer; tests that wait for something should pass their own deadlines
 * through {@link #scaled(Duration)} so that one switch slows the whole suite down consistently.
 * The factor is read on every call, so it may be set before the first use from any thread.
 */
public final class TestTimeouts {

    /** The system property holding the factor; a positive decimal number, default {@code 1.0}. */
    public static final String FACTOR_PROPERTY = "relock.test.timeout.factor";

    private TestTimeouts() {
    }

    /**
     * Returns the current factor.
     *
     * @throws IllegalStateException if the property is set but is not a positive number
     */
    public static double factor() {
        String text = System.getProperty(FACTOR_PROPERTY);
        if (text == null || text.isBlank()) {
            return 1.0;
        }
        double factor;
        try {
            factor = Double.parseDouble(text.trim());
        } catch (NumberFormatException e) {
            throw new IllegalStateException(FACTOR_PROPERTY + " must be a positive number, was '" + text + "'", e);
        }
        if (!(factor > 0) || Double.isInfinite(factor)) {
            throw new IllegalStateException(FACTOR_PROPERTY + " must be a positive number, was '" + text + "'");
        }
        return factor;
    }

    /** Returns {@code base} multiplied by {@link #factor()}, rounded to whole milliseconds, at least 1 ms. */
    public static Duration scaled(Duration base) {
        long millis = Math.round(base.toMillis() * factor());
        return Duration.ofMillis(Math.max(1, millis));
    }
}
