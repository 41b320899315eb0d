package dev.relock.internal.redlock;

import static org.assertj.core.api.Assertions.assertThat;

import dev.relock.internal.engine.HandMovedClock;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** A Redlock attempt's validity and progress, on a hand-moved ticker, without Redis. */
class AttemptTest {

    @Test
    void aHoldIsValidUntilTheTickerReachesSendPlusLeaseMinusDriftAndNoLonger() {
        HandMovedClock ticker = new HandMovedClock();
        Attempt attempt = new Attempt("1", ticker.nanoTime(), List.of());
        // 1 % of 10 s and 50 ms
        long validUntil = attempt.validUntil(ClockDrift.DEFAULT, 10_000);

        assertThat(validUntil - attempt.sent()).isEqualTo(TimeUnit.MILLISECONDS.toNanos(9_850));
        ticker.advance(TimeUnit.MILLISECONDS.toNanos(9_850) - 1);
        assertThat(ticker.nanoTime() - validUntil < 0).as("1 ns before its end").isTrue();
        ticker.advance(1);
        assertThat(ticker.nanoTime() - validUntil < 0).as("at its end").isFalse();
    }

    @Test
    void theProgressShowsEachNodesReplyInNodeOrder() {
        Attempt attempt = new Attempt("1", 0, List.of(CompletableFuture.completedFuture(List.of(1L, 3L)),
                new CompletableFuture<>(), CompletableFuture.failedFuture(new IllegalStateException("down"))));
        assertThat(attempt.progress()).isEqualTo("apx");
    }
}
