package dev.relock.internal.redlock;

import dev.relock.internal.engine.LockKeys;
import dev.relock.internal.script.RedlockScripts;
import io.lettuce.core.ScriptOutputType;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * How this client calls release.lua (and release-after.lua) on a node: the argument layout of each kind of call, the
 * release channel of its key prefix, and the turn a release keeps for the first waiting writer. Every call but the
 * forced one is an EVAL in order on the node's connection, so it runs there after every attempt and renewal sent
 * before it. Immutable.
 */
final class ReleaseCalls {

    /** An attempt id the engine never issues: release.lua then removes no hold. */
    static final String NO_ATTEMPT = "-";

    private final String channel;
    // how long a release keeps the lock for the first waiting writer (its turn): the handoff grace, in ms as the
    // scripts take it, and in ns
    private final String turnMillis;
    private final long turnNanos;

    ReleaseCalls(String channel, Duration handoffGrace) {
        long millis = Math.max(1, handoffGrace.toMillis());
        this.channel = channel;
        this.turnMillis = Long.toString(millis);
        this.turnNanos = TimeUnit.MILLISECONDS.toNanos(millis);
    }

    /** How long a release keeps the lock for the first waiting writer: see release.lua. */
    long turnNanos() {
        return turnNanos;
    }

    /** The owner's release of the hold that attempt {@code attempt} took, announced on the channel. */
    CompletableFuture<Long> release(RedlockNode node, String[] keys, String member, String attempt) {
        return node.runInOrder(RedlockScripts.RELEASE, ScriptOutputType.INTEGER, keys, member, channel, "0", "1",
                turnMillis, attempt);
    }

    /** As {@link #release}, but the lock stays taken for {@code delayMillis} first (release-after.lua). */
    CompletableFuture<Long> releaseAfter(RedlockNode node, String[] keys, String member, long delayMillis,
            String attempt) {
        return node.runInOrder(RedlockScripts.RELEASE_AFTER, ScriptOutputType.INTEGER, keys, member,
                Long.toString(delayMillis), attempt);
    }

    /**
     * The clean-up of attempt {@code attemptId} (or of a lost hold) by owner; for a writer, {@code stopWaiting} takes
     * its mark, place and turn too, and the other arguments put back the wait of one that goes on waiting (see
     * {@link CleanUps#afterAttempt}).
     */
    CompletableFuture<Long> cleanUp(RedlockNode node, String[] keys, String member, boolean stopWaiting,
            String attemptId, String waited, String markMillis, String place, boolean quiet) {
        return node.runInOrder(RedlockScripts.RELEASE, ScriptOutputType.INTEGER, keys, member, channel, "0",
                stopWaiting ? "1" : "0", turnMillis, attemptId, waited, markMillis, place, quiet ? "1" : "0");
    }

    /** Deletes the lock on every node whoever holds it; yes = deleted there. */
    Poll<Long> forceRelease(NodeSet nodes, LockKeys keys) {
        return nodes.sendToAll(RedlockScripts.RELEASE, ScriptOutputType.INTEGER, keys.all(),
                deleted -> deleted == 1,
                "", channel, "1", "0", turnMillis, "");
    }
}
