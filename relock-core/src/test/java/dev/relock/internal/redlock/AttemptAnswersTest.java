package dev.relock.internal.redlock;

import static org.assertj.core.api.Assertions.assertThat;

import dev.relock.RelockException;
import dev.relock.internal.engine.Ticker;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisConnectionException;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Reading five nodes' answers to one Redlock attempt, without Redis. */
class AttemptAnswersTest {

    private static final int NODES = 5;
    private static final int MAJORITY = 3;

    @Test
    void theTokenIsTheLargestGrantedAndCountsTheNodesThatGaveIt() {
        List<List<Object>> answers = List.of(List.of(1L, 30L), List.of(1L, 31L), List.of(0L, 500L, "c1:1"),
                List.of(1L, 31L));
        assertThat(AttemptAnswers.largestToken(answers)).isEqualTo(31);
        assertThat(AttemptAnswers.giving(answers, 31)).isEqualTo(2);
        assertThat(AttemptAnswers.largestToken(List.of(List.of(0L, 500L, "c1:1")))).isZero();
    }

    @Test
    void theAgreedPlaceIsTheMedianOfThePlacesGivenAndARefusalWithoutOneGivesNone() {
        List<List<Object>> answers = List.of(List.of(0L, 500L, "c1:1", "300"), List.of(0L, 500L, "c1:1", "100"),
                List.of(0L, 500L, "c1:1", "2.0e2"), List.of(1L, 9L));
        assertThat(AttemptAnswers.agreedPlace(answers)).isEqualTo("200");
        // a nil place (CI saw one from a node on Redis 6.2) and a single try's '' are no votes, not a failure
        List<List<Object>> withoutPlaces = List.of(Arrays.asList(0L, 500L, "c1:1", null), List.of(0L, 500L, "c1:1", ""),
                List.of(0L, 500L, "c1:1", "700"));
        assertThat(AttemptAnswers.agreedPlace(withoutPlaces)).isEqualTo("700");
        assertThat(AttemptAnswers.agreedPlace(List.of(Arrays.asList(0L, 500L, "c1:1", null)))).isEmpty();
    }

    @Test
    void theNextTryComesWhenEnoughOfTheHoldersLeasesRanOutForAMajority() {
        // 1 yes: two more nodes must be free, the second shortest lease of the refusals is 700 ms
        Poll<List<Object>> poll = poll(answer(1L, 9L), answer(0L, 900L, "c1:1"), answer(0L, 300L, "c1:1"),
                answer(0L, 700L, "c1:1"), answer(0L, -1L, "c1:1"));
        assertThat(AttemptAnswers.retryNanos(poll, MAJORITY, 30_000)).isEqualTo(TimeUnit.MILLISECONDS.toNanos(701));
        assertThat(AttemptAnswers.retryNanos(poll, MAJORITY, 500)).as("at most a default lease")
                .isEqualTo(TimeUnit.MILLISECONDS.toNanos(501));
        assertThat(AttemptAnswers.holderOfMajority(poll.answers(), MAJORITY)).isTrue();
    }

    @Test
    void anAttemptIsUnansweredOnlyWhenNoMajorityAnsweredAndNoneRefusedOrTooManyFailed() {
        CompletableFuture<List<Object>> out = new CompletableFuture<>();
        assertThat(AttemptAnswers.unanswered(poll(answer(0L, 500L, "c1:1"), answer(0L, 500L, "c1:1"), out, out, out),
                NODES, MAJORITY)).as("refused twice, the rest still out").isFalse();
        assertThat(AttemptAnswers.unanswered(poll(failed(), failed(), failed(), answer(0L, 500L, "c1:1"), out),
                NODES, MAJORITY)).as("three failed").isTrue();
        assertThat(AttemptAnswers.unanswered(poll(answer(1L, 3L), failed(), out, out, out), NODES, MAJORITY))
                .as("nobody refused").isTrue();
        assertThat(AttemptAnswers.unanswered(poll(answer(0L, 1L, "c1:1"), answer(0L, 1L, "c1:1"),
                answer(0L, 1L, "c1:1"), failed(), failed()), NODES, MAJORITY)).isFalse();
    }

    @Test
    void aScriptRefusedByMoreThanAMinorityFailsForGood() {
        RedisCommandExecutionException wrongType =
                new RedisCommandExecutionException("WRONGTYPE Operation against a key");
        Poll<List<Object>> refused = poll(CompletableFuture.failedFuture(wrongType),
                CompletableFuture.failedFuture(wrongType), CompletableFuture.failedFuture(wrongType),
                answer(0L, 1L, "c1:1"), answer(0L, 1L, "c1:1"));
        RelockException failure = AttemptAnswers.refusedForGood(refused, "orders", NODES, MAJORITY);
        assertThat(failure).isNotNull();
        assertThat(failure.getMessage()).contains("lock 'orders'", "3 of 5", "WRONGTYPE");

        Poll<List<Object>> minority = poll(CompletableFuture.failedFuture(wrongType),
                CompletableFuture.failedFuture(wrongType), failed(), failed(), failed());
        assertThat(AttemptAnswers.refusedForGood(minority, "orders", NODES, MAJORITY))
                .as("only two refused; the rest were out of reach").isNull();
    }

    @SafeVarargs
    private static Poll<List<Object>> poll(CompletableFuture<List<Object>>... replies) {
        return new Poll<>(List.of(), List.of(replies), MAJORITY, reply -> (Long) reply.get(0) == 1L, Ticker.SYSTEM);
    }

    private static CompletableFuture<List<Object>> answer(Object... fields) {
        return CompletableFuture.completedFuture(List.of(fields));
    }

    private static CompletableFuture<List<Object>> failed() {
        return CompletableFuture.failedFuture(new RedisConnectionException("Connection refused"));
    }
}
