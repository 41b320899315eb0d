package dev.relock.internal.engine;

/**
 * Now, in nanoseconds on a monotonic clock, as {@link System#nanoTime()} counts them: the one source every deadline,
 * back-off, grace and lease-end decision of a client reads ({@link EngineClient#ticker()}). A client reads the
 * system's; a unit test moves a hand-driven one, so deadline logic is checked without Redis and without sleeping
 * (Caffeine's {@code Ticker} is the model). Only differences between two readings of one ticker mean anything.
 *
 * <p>Public because both engines, each in a package of its own, read it.
 */
@FunctionalInterface
public interface Ticker {

    /** The JVM's monotonic clock, {@link System#nanoTime()}. */
    Ticker SYSTEM = System::nanoTime;

    /** Now, in nanoseconds; comparable only with other readings of this ticker, by subtraction. */
    long nanoTime();
}
