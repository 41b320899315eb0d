package dev.relock.internal.redlock;

import dev.relock.RelockException;
import dev.relock.internal.redis.RedisFailures;
import io.lettuce.core.RedisCommandExecutionException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Reading the nodes' answers to one acquisition attempt (acquire.lua, acquire-read.lua: a grant is
 * {@code [1, token]}, a refusal {@code [0, the holder's pttl, the holder]} and, to a writer, its place): what they
 * say about the lock's holder, when to try again, and where a waiting writer stands. Stateless.
 */
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

    /**
     * The place this waiting writer takes on every node from now on: the median of the places the nodes that
     * refused it gave it (acquire.lua), or "" when none did. One value for all nodes, so that every node orders
     * two waiting writers alike and gives the turn after a release to the same one. A refusal without a place (a
     * single try's '', or a nil) gives none; places order turns only, never who holds.
     */
    static String agreedPlace(List<List<Object>> answers) {
        List<Long> places = new ArrayList<>();
        for (List<Object> answer : answers) {
            if ((Long) answer.get(0) == 0L && answer.size() > 3 && answer.get(3) instanceof String place
                    && !place.isEmpty()) {
                // a score: an integer number of microseconds, which Redis may print as a double
                places.add((long) Double.parseDouble(place));
            }
        }
        if (places.isEmpty()) {
            return "";
        }
        places.sort(null);
        return Long.toString(places.get(places.size() / 2));
    }

    /**
     * The failure of an attempt that so many nodes answered with an error that does not pass with time (a key of
     * another type, a script error) that no majority can grant it; else null. Unlike a node out of reach, waiting
     * changes nothing: the acquisition fails, as it does on a single server.
     */
    static RelockException refusedForGood(Poll<List<Object>> poll, String name, int nodeCount, int majority) {
        int refusing = 0;
        String example = null;
        for (CompletableFuture<List<Object>> reply : poll.replies()) {
            if (reply.isCompletedExceptionally()) {
                Throwable cause = RedisFailures.unwrap(reply.handle((value, error) -> error).join());
                String message = String.valueOf(cause.getMessage());
                if (cause instanceof RedisCommandExecutionException
                        && (message.startsWith("WRONGTYPE") || message.startsWith("ERR"))) {
                    refusing++;
                    example = message;
                }
            }
        }
        if (refusing <= nodeCount - majority) {
            return null;
        }
        return new RelockException("acquire of lock '" + name + "': " + refusing + " of " + nodeCount
                + " Redlock nodes refused the script, so no majority can grant it: " + example, null);
    }

    /** The largest fencing token among the grants in {@code answers} ({@code [1, token]}), 0 if none. */
    static long largestToken(List<List<Object>> answers) {
        long largest = 0;
        for (List<Object> answer : answers) {
            if ((Long) answer.get(0) == 1L) {
                largest = Math.max(largest, (Long) answer.get(1));
            }
        }
        return largest;
    }

    /** How many of the grants in {@code answers} gave {@code token}. */
    static int giving(List<List<Object>> answers, long token) {
        int giving = 0;
        for (List<Object> answer : answers) {
            if ((Long) answer.get(0) == 1L && (Long) answer.get(1) == token) {
                giving++;
            }
        }
        return giving;
    }

    /**
     * Whether an attempt that did not win was lost for want of answers, so that only waiting helps: fewer than a
     * majority answered, and no node refused it or so many failed that a majority cannot answer at all. Refusals
     * decide a poll before the remaining nodes answer, so a poll refused by a majority may have few answers.
     */
    static boolean unanswered(Poll<?> poll, int nodeCount, int majority) {
        return poll.answered() < majority && (poll.no() == 0 || poll.failed() > nodeCount - majority);
    }

    /** Whether the nodes that refused name one holder (a writer, or '~readers') on a majority of all nodes. */
    static boolean holderOfMajority(List<List<Object>> answers, int majority) {
        Map<String, Integer> byHolder = new HashMap<>();
        for (List<Object> reply : answers) {
            if ((Long) reply.get(0) == 0L && reply.size() > 2) {
                if (byHolder.merge((String) reply.get(2), 1, Integer::sum) >= majority) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * When enough of the refusing nodes' leases have run out for a majority to be free, plus 1 ms;
     * at most {@code defaultLeaseMillis} (a key without expiry is waited out by release messages).
     */
    static long retryNanos(Poll<List<Object>> poll, int majority, long defaultLeaseMillis) {
        List<Long> leases = new ArrayList<>();
        for (List<Object> reply : poll.answers()) {
            if ((Long) reply.get(0) == 0L) {
                long pttl = (Long) reply.get(1);
                leases.add(pttl < 0 ? Long.MAX_VALUE : pttl);
            }
        }
        leases.sort(null);
        int mustFree = majority - poll.yes();
        long millis = mustFree <= 0 || mustFree > leases.size() ? 0 : leases.get(mustFree - 1);
        long capped = Math.min(millis, defaultLeaseMillis) + 1;
        return TimeUnit.MILLISECONDS.toNanos(capped);
    }
}
