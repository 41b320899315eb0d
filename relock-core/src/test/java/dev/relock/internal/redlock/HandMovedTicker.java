package dev.relock.internal.redlock;

import dev.relock.internal.engine.Ticker;
import java.util.concurrent.TimeUnit;

/** A {@link Ticker} that moves only when a test moves it; from any start, as readings compare by difference. */
final class HandMovedTicker implements Ticker {

    private long now = Long.MAX_VALUE - TimeUnit.MINUTES.toNanos(1);

    @Override
    public long nanoTime() {
        return now;
    }

    /** Moves the clock {@code millis} on. */
    void advanceMillis(long millis) {
        now += TimeUnit.MILLISECONDS.toNanos(millis);
    }

    /** Moves the clock {@code nanos} on. */
    void advanceNanos(long nanos) {
        now += nanos;
    }
}
