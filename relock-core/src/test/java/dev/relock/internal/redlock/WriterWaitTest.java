package dev.relock.internal.redlock;

import static org.assertj.core.api.Assertions.assertThat;

import dev.relock.internal.engine.HandMovedClock;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** What a waiting writer's attempts tell the nodes of its wait, on a hand-moved ticker, without Redis. */
class WriterWaitTest {

    private static final long DEFAULT_LEASE_MILLIS = 30_000;

    private final HandMovedClock ticker = new HandMovedClock();

    @Test
    void theTimeWaitedGrowsWithTheTicker() {
        WriterWait wait = new WriterWait(ticker, true, false, true, 0, DEFAULT_LEASE_MILLIS);
        assertThat(wait.waitedMicros()).isEqualTo("0");
        ticker.advanceMillis(1_500);
        assertThat(wait.waitedMicros()).isEqualTo("1500000");
    }

    @Test
    void aMarkLastsUntilTheWaitsEndAndAtMostOneAndAHalfDefaultLeases() {
        long deadline = ticker.nanoTime() + TimeUnit.SECONDS.toNanos(100);
        WriterWait wait = new WriterWait(ticker, true, false, false, deadline, DEFAULT_LEASE_MILLIS);
        assertThat(wait.marks()).isTrue();
        assertThat(wait.markMillis()).as("capped").isEqualTo(45_000);

        ticker.advanceMillis(90_000);
        assertThat(wait.markMillis()).as("the wait's end, plus 1 ms").isEqualTo(10_001);
        ticker.advanceMillis(20_000);
        assertThat(wait.markMillis()).as("past the end: at least 1 ms").isEqualTo(1);

        WriterWait forever = new WriterWait(ticker, true, false, true, 0, DEFAULT_LEASE_MILLIS);
        assertThat(forever.markMillis()).isEqualTo(45_000);
    }

    @Test
    void aReaderAndASingleTryMarkNothingAndHaveWaitedNothing() {
        WriterWait reader = new WriterWait(ticker, false, false, true, 0, DEFAULT_LEASE_MILLIS);
        WriterWait once = new WriterWait(ticker, true, true, false, ticker.nanoTime(), DEFAULT_LEASE_MILLIS);
        ticker.advanceMillis(10);
        assertThat(reader.marks()).isFalse();
        assertThat(reader.markMillis()).isZero();
        assertThat(once.marks()).isFalse();
        assertThat(once.markMillis()).isZero();
        assertThat(once.waitedMicros()).isEqualTo("0");
    }

    @Test
    void thePlaceIsTheMedianOfTheRefusalsOfTheFirstAttemptThatGotOneAndIsKept() {
        WriterWait wait = new WriterWait(ticker, true, false, true, 0, DEFAULT_LEASE_MILLIS);
        wait.placeFrom(List.of(List.of(1L, 3L)));
        assertThat(wait.place()).as("no refusal gave a place").isEmpty();

        wait.placeFrom(List.of(List.of(0L, 100L, "a", "300"), List.of(0L, 100L, "a", "1.0e2"),
                List.of(0L, 100L, "a", "200")));
        assertThat(wait.place()).isEqualTo("200");

        wait.placeFrom(List.of(List.of(0L, 100L, "a", "900")));
        assertThat(wait.place()).as("kept for the whole wait").isEqualTo("200");
    }
}
