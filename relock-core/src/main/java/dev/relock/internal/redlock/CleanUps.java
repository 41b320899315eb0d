package dev.relock.internal.redlock;

import dev.relock.LeaseState;
import dev.relock.internal.engine.Hold;
import dev.relock.internal.engine.LockKeys;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Undoes, on every node, what did not end in a held lock: the holds an attempt that did not win took there (and a
 * writer's mark, place and turn when it stops waiting), and what is left of a lost hold. Each clean-up is release.lua
 * by owner and attempt id, by EVAL in order on the node's connection, so it reaches the node after the attempt it
 * undoes, even one that timed out and is applied later; naming the attempt keeps it from removing a hold of the same
 * owner's later attempt. No clean-up waits in its caller.
 *
 * <p>{@link #pending} holds every clean-up sent or waiting for its node's reply to the attempt it undoes, until it is
 * done; close() waits for them before it closes the connections, so no hold of a failed attempt outlives the client.
 * Thread-safe.
 */
final class CleanUps {

    private static final Logger log = LoggerFactory.getLogger(CleanUps.class);

    private final NodeSet nodes;
    private final ReleaseCalls calls;
    private final Set<CompletableFuture<?>> pending = ConcurrentHashMap.newKeySet();

    CleanUps(NodeSet nodes, ReleaseCalls calls) {
        this.nodes = nodes;
        this.calls = calls;
    }

    /**
     * Undoes an attempt that did not win: deletes the hold it took on every node, unless a later
     * attempt of the same owner reached that node first; {@code stopWaiting}: the writer's mark,
     * place in the queue and turn go too (and grants on release made for the attempt, which goes
     * to every node then). Without {@code stopWaiting}, nothing is sent to a node that refused the
     * attempt: the writer waits there, and a grant made for it there stays the writer's to take. On
     * each node the clean-up is sent once that node answered the attempt (or failed to): sent
     * earlier, it could overtake the attempt, which Lettuce writes from another thread. Without
     * waiting.
     *
     * @param attempt the attempt, named by its id and followed by its replies
     * @param wait what the attempt told the nodes of its wait: a writer that goes on waiting has its mark, the
     *     time it has waited and its place put back where the attempt took them away (acquire.lua's ARGV[3], [4]
     *     and [7])
     * @param quiet for such a writer, a turn given back to it is not announced (see release.lua's ARGV[10])
     */
    void afterAttempt(LockKeys keys, String member, Attempt attempt, boolean stopWaiting, WriterWait wait,
            boolean quiet) {
        boolean waits = !stopWaiting && wait.marks();
        String waited = waits ? wait.waitedMicros() : "0";
        String markMillis = waits ? Long.toString(wait.markMillis()) : "0";
        String place = waits ? wait.place() : "";
        boolean quietTurn = waits && quiet;
        String[] releaseKeys = keys.all();
        for (int i = 0; i < nodes.size(); i++) {
            RedlockNode node = nodes.node(i);
            CompletableFuture<?> reply = attempt.replies().get(i);
            onceAnswered(reply, () -> true, () -> stopWaiting || !AttemptAnswers.isRefusal(reply)
                    ? send(node, keys.lock(), calls.cleanUp(node, releaseKeys, member, stopWaiting, attempt.id(),
                            waited, markMillis, place, quietTurn))
                    : null);
        }
    }

    /**
     * After a writer won by majority: where a node refused its attempt (or did not answer it), the writer's mark,
     * place and turn go there (release.lua as a writer that stops waiting, with {@link ReleaseCalls#NO_ATTEMPT}, so no
     * hold is removed). Where the refusal is in, the clean-up is sent at once: before the holder can release, so
     * before any later attempt of the same owner. Where the reply is still out, it is sent once the reply is in, and
     * only if {@code hold} is still held then: its release stops the wait on every node anyway, and a clean-up that
     * followed the owner's next attempt would undo that attempt's wait (liveness only: no hold is removed).
     * Without waiting.
     */
    void stopWaitingWhereRefused(LockKeys keys, String member, List<CompletableFuture<List<Object>>> replies,
            Hold hold) {
        String[] releaseKeys = keys.all();
        for (int i = 0; i < nodes.size(); i++) {
            RedlockNode node = nodes.node(i);
            CompletableFuture<List<Object>> reply = replies.get(i);
            onceAnswered(reply, () -> hold.state() == LeaseState.HELD, () -> AttemptAnswers.isGrant(reply) ? null
                    : send(node, keys.lock(), calls.cleanUp(node, releaseKeys, member, true, ReleaseCalls.NO_ATTEMPT,
                            "0", "0", "", false)));
        }
    }

    /**
     * Deletes what is left of a lost hold on every node (and a writer's place, mark and turn as a waiting writer),
     * without waiting. It names the attempt that took the hold, so on a node the owner's next attempt reached first
     * it removes no hold of that attempt's: it may go out after the owner was told, and after its next attempt.
     */
    void lost(Hold hold) {
        String attempt = Long.toString(hold.attemptId);
        String[] releaseKeys = hold.keys.all();
        String member = RedlockEngine.member(hold);
        for (RedlockNode node : nodes.all()) {
            send(node, hold.keys.lock(), calls.cleanUp(node, releaseKeys, member, true, attempt, "", "", "", false));
        }
    }

    /** The clean-ups not done yet, as of now. */
    List<CompletableFuture<?>> pending() {
        return new ArrayList<>(pending);
    }

    /**
     * Runs {@code cleanUp} for one node once {@code reply}, that node's answer to the attempt (or its failure), is in,
     * so what it sends follows the attempt: at once if the reply is in, else when it comes, on the event executors
     * (never an I/O thread), and then only if {@code wantedWhenLate} still holds; {@link #pending} holds it
     * until it is done. {@code cleanUp} returns what it sent, or null if nothing is to be undone there.
     */
    private void onceAnswered(CompletableFuture<?> reply, BooleanSupplier wantedWhenLate,
            Supplier<CompletableFuture<Long>> cleanUp) {
        if (reply.isDone()) {
            cleanUp.get();
            return;
        }
        CompletableFuture<Long> cleanedUp = reply.handle((answer, error) -> null).thenComposeAsync(answered -> {
            CompletableFuture<Long> sent = wantedWhenLate.getAsBoolean() ? cleanUp.get() : null;
            return sent == null ? CompletableFuture.completedFuture(0L) : sent;
        }, nodes.timer());
        pending.add(cleanedUp);
        cleanedUp.whenComplete((deleted, error) -> pending.remove(cleanedUp));
    }

    /** Keeps {@code cleanedUp}, a clean-up of {@code lockKey}'s lock sent to {@code node}, pending until it is done. */
    private CompletableFuture<Long> send(RedlockNode node, String lockKey, CompletableFuture<Long> cleanedUp) {
        pending.add(cleanedUp);
        return cleanedUp.whenComplete((deleted, error) -> {
            pending.remove(cleanedUp);
            if (error != null) {
                log.debug("Redlock clean-up of '{}' on {} failed; its lease runs out by itself: {}",
                        lockKey, node.address, error.toString());
            }
        });
    }
}
