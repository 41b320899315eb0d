package dev.relock.internal.redlock;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * One acquisition attempt as it was sent to every node: the id a clean-up, a grant on release and a token write-back
 * name it by (acquire.lua's ARGV[5]), when it was sent (the client's ticker), and every node's reply, by node, which
 * a clean-up follows on that node. Immutable; the replies complete on Lettuce's threads.
 *
 * @param id unique in this client ({@link Acquisitions#nextAttemptId})
 * @param sent when it was sent, before any node's lease for it began
 * @param replies every node's reply, by node: a grant {@code [1, token]}, a refusal {@code [0, ...]} or a failure
 */
record Attempt(String id, long sent, List<CompletableFuture<List<Object>>> replies) {

    /**
     * Until when (ticker) a hold this attempt took on a majority is valid: {@code sent + lease - drift}. So is a hold
     * won by grants on release for it: every node's lease for it began after it was sent. Valid while the ticker
     * reads less.
     */
    long validUntil(ClockDrift drift, long leaseMillis) {
        return sent + drift.validNanos(leaseMillis);
    }

    /** Each node's reply in node order: 'p' pending, 'a' answered, 'x' failed. */
    String progress() {
        StringBuilder progress = new StringBuilder();
        for (CompletableFuture<List<Object>> reply : replies) {
            progress.append(!reply.isDone() ? 'p' : reply.isCompletedExceptionally() ? 'x' : 'a');
        }
        return progress.toString();
    }
}
