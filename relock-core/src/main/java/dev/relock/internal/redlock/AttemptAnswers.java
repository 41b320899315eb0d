package dev.relock.internal.redlock;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/** Reading the nodes' answers to one acquisition attempt (acquire.lua, acquire-read.lua). Stateless. */
final class AttemptAnswers {

    private AttemptAnswers() {
    }

    /**
     * Whether {@code reply}, a node's answer to an attempt, is in and refused it: nothing of the attempt is held there
     * but the writer's wait, and the grants on release made for it there after (which {@link CleanUps#afterAttempt}
     * leaves alone for a writer that goes on waiting).
     */
    static boolean isRefusal(CompletableFuture<?> reply) {
        return answers(reply, 0L);
    }

    /** Whether {@code reply}, a node's answer to an attempt, is in and took the lock there (acquire.lua's 1). */
    static boolean isGrant(CompletableFuture<?> reply) {
        return answers(reply, 1L);
    }

    /** Whether {@code reply}, a node's answer to an attempt, is in and begins with {@code code}. */
    private static boolean answers(CompletableFuture<?> reply, long code) {
        return reply.isDone() && !reply.isCompletedExceptionally() && reply.join() instanceof List<?> answer
                && !answer.isEmpty() && Long.valueOf(code).equals(answer.get(0));
    }
}
