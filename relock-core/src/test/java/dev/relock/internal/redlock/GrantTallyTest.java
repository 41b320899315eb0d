package dev.relock.internal.redlock;

import static org.assertj.core.api.Assertions.assertThat;

import dev.relock.internal.engine.HandMovedClock;
import io.lettuce.core.RedisConnectionException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Which grants on release count toward a waiting writer's majority, and how long the rest are waited for, on a
 * hand-moved ticker, without Redis.
 */
class GrantTallyTest {

    private static final List<Object> REFUSAL = List.of(0L, 500L, "other-client:1");
    private static final List<Object> GRANT = List.of(1L, 7L);

    private final HandMovedClock ticker = new HandMovedClock();
    private final GrantTally tally = new GrantTally(3, ticker);

    @Test
    void onlyAGrantForTheLatestAttemptFromANodeThatRefusedItCounts() {
        CompletableFuture<List<Object>> pending = new CompletableFuture<>();
        Attempt attempt = attempt("2", CompletableFuture.completedFuture(REFUSAL), pending,
                CompletableFuture.completedFuture(GRANT));
        tally.reset(attempt);

        assertThat(tally.offer(0, 11, "1")).as("an earlier attempt's").isEqualTo(GrantTally.Offer.IGNORED);
        assertThat(tally.offer(2, 11, "2")).as("a node that took the attempt").isEqualTo(GrantTally.Offer.IGNORED);
        assertThat(tally.offer(1, 11, "2")).as("its reply still out").isEqualTo(GrantTally.Offer.AFTER_REPLY);
        assertThat(tally.count()).isZero();

        assertThat(tally.offer(0, 11, "2")).isEqualTo(GrantTally.Offer.COUNTED);
        assertThat(tally.offer(0, 11, "2")).as("the same node again").isEqualTo(GrantTally.Offer.IGNORED);
        pending.complete(REFUSAL);
        assertThat(tally.offer(1, 12, "2")).isEqualTo(GrantTally.Offer.COUNTED);
        assertThat(tally.count()).isEqualTo(2);
        assertThat(tally.largestToken()).isEqualTo(12);
        assertThat(tally.agreeing()).isEqualTo(1);
    }

    @Test
    void aGrantFromANodeWhoseReplyFailedDoesNotCount() {
        tally.reset(attempt("5", CompletableFuture.failedFuture(new RedisConnectionException("reset")),
                CompletableFuture.completedFuture(REFUSAL), CompletableFuture.completedFuture(REFUSAL)));

        assertThat(tally.offer(0, 9, "5")).isEqualTo(GrantTally.Offer.IGNORED);
        assertThat(tally.offer(1, 9, "5")).isEqualTo(GrantTally.Offer.COUNTED);
        assertThat(tally.offer(2, 9, "5")).isEqualTo(GrantTally.Offer.COUNTED);
        assertThat(tally.agreeing()).as("two nodes gave token 9").isEqualTo(2);
    }

    @Test
    void noGrantCountsOnceTheTallyIsVoidUntilTheNextAttempt() {
        tally.reset(refusedEverywhere("3"));
        assertThat(tally.offer(0, 4, "3")).isEqualTo(GrantTally.Offer.COUNTED);

        tally.makeVoid();
        assertThat(tally.isVoid()).isTrue();
        assertThat(tally.offer(1, 4, "3")).isEqualTo(GrantTally.Offer.IGNORED);

        tally.reset(refusedEverywhere("4"));
        assertThat(tally.isVoid()).isFalse();
        assertThat(tally.count()).isZero();
        assertThat(tally.largestToken()).isZero();
        assertThat(tally.offer(1, 5, "4")).isEqualTo(GrantTally.Offer.COUNTED);
    }

    @Test
    void theOtherGrantsAreAwaitedFromTheFirstOnTheTickerForTenMillisAtMostATurn() {
        tally.reset(refusedEverywhere("8"));
        long first = ticker.nanoTime();
        tally.offer(0, 21, "8");
        ticker.advanceMillis(4);
        tally.offer(1, 21, "8");

        assertThat(tally.othersAwaitedUntil(TimeUnit.SECONDS.toNanos(1)) - first)
                .as("from the first grant, not the second")
                .isEqualTo(TimeUnit.MILLISECONDS.toNanos(10));
        assertThat(tally.othersAwaitedUntil(TimeUnit.MILLISECONDS.toNanos(3)) - first)
                .as("a turn shorter than the grant wait")
                .isEqualTo(TimeUnit.MILLISECONDS.toNanos(3));
    }

    private static Attempt refusedEverywhere(String id) {
        return attempt(id, CompletableFuture.completedFuture(REFUSAL), CompletableFuture.completedFuture(REFUSAL),
                CompletableFuture.completedFuture(REFUSAL));
    }

    @SafeVarargs
    private static Attempt attempt(String id, CompletableFuture<List<Object>>... replies) {
        return new Attempt(id, 0, List.of(replies));
    }
}
