package dev.relock.internal.redlock;

import static org.assertj.core.api.Assertions.assertThat;

import dev.relock.internal.engine.Ticker;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Counting a Redlock poll's replies, without Redis. */
class PollTest {

    /**
     * CI caught {@code forceUnlock} on Redlock failing with "1 of 3 Redlock nodes answered" and no failure named: the
     * wait for every reply returned when the replies had come but before the last ones were counted. Replies
     * completed on another thread, as Lettuce's I/O threads complete them, are all counted once the wait returns.
     */
    @Test
    void everyReplyIsCountedWhenTheWaitForAllOfThemReturns() throws Exception {
        ExecutorService io = Executors.newSingleThreadExecutor();
        try {
            for (int round = 0; round < 2_000; round++) {
                List<CompletableFuture<Long>> replies = List.of(new CompletableFuture<>(), new CompletableFuture<>(),
                        new CompletableFuture<>());
                Poll<Long> poll = new Poll<>(List.of(), replies, 2, deleted -> deleted == 1L, Ticker.SYSTEM);
                io.execute(() -> replies.forEach(reply -> reply.complete(1L)));
                poll.awaitAll(TimeUnit.SECONDS.toNanos(10));
                assertThat(poll.answered()).as("round %d", round).isEqualTo(3);
                assertThat(poll.won()).isTrue();
            }
        } finally {
            io.shutdownNow();
        }
    }
}
