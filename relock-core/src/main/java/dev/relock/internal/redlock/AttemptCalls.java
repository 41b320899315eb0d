package dev.relock.internal.redlock;

import dev.relock.internal.engine.LockKeys;
import dev.relock.internal.engine.LockMode;
import dev.relock.internal.script.RedlockScripts;
import io.lettuce.core.ScriptOutputType;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * How this client sends one acquisition attempt, and the fencing token write-back after it, to every node at once:
 * acquire.lua (a writer's) or acquire-read.lua with the arguments of the mode, and fence.lua. Both go by EVAL in order
 * on each node's connection ({@link NodeSet#sendToAllInOrder}), so the clean-up or release sent after either runs
 * after it there. Immutable.
 */
final class AttemptCalls {

    // how far ahead of this client's clock an attempt's proposed token is (acquire.lua's ARGV[6]):
    // ahead of the nodes' clocks too unless they run that much faster, so that nodes whose fences
    // are below it all hand out the proposal
    private static final long TOKEN_LEAD_MICROS = TimeUnit.MILLISECONDS.toMicros(50);

    private final NodeSet nodes;

    AttemptCalls(NodeSet nodes) {
        this.nodes = nodes;
    }

    /**
     * Sends attempt {@code attemptId} of {@code owner} for a lease of {@code leaseMillis}; a writer's tells the nodes
     * of its {@code wait}. A node's yes is a grant ({@code [1, token]}). The proposed token is this JVM's wall clock in
     * microseconds since the epoch, plus a lead: tokens grow across clients as their clocks do, and a node hands out
     * the proposal unless its fence is past it.
     */
    Poll<List<Object>> acquire(LockKeys keys, LockMode mode, String owner, long leaseMillis, String attemptId,
            WriterWait wait) {
        String lease = Long.toString(leaseMillis);
        String proposal = Long.toString(epochMicros(Instant.now()) + TOKEN_LEAD_MICROS);
        // a reader has no mark, no wait and no place: acquire-read.lua takes none of their arguments
        boolean reader = mode == LockMode.READ;
        return nodes.sendToAllInOrder(reader ? RedlockScripts.ACQUIRE_READ : RedlockScripts.ACQUIRE,
                ScriptOutputType.MULTI, keys.all(),
                reply -> (Long) reply.get(0) == 1L,
                reader ? new String[] {owner, lease, attemptId, proposal}
                        : new String[] {owner, lease, Long.toString(wait.markMillis()), wait.waitedMicros(), attemptId,
                                proposal, wait.place()});
    }

    /**
     * Writes {@code token} back as the token of the hold that attempt {@code attemptId} of {@code member} took, on
     * every node (fence.lua): in order on each node, so it changes the token of that hold and of no later one. Every
     * node's reply counts as a yes.
     */
    Poll<Long> writeBack(LockKeys keys, String member, long token, String attemptId) {
        return nodes.sendToAllInOrder(RedlockScripts.FENCE, ScriptOutputType.INTEGER, keys.all(), written -> true,
                member, Long.toString(token), attemptId);
    }

    /** {@code instant} in microseconds since the epoch. */
    private static long epochMicros(Instant instant) {
        return instant.getEpochSecond() * 1_000_000 + instant.getNano() / 1_000;
    }
}
