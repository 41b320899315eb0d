package dev.relock.internal.single;

import dev.relock.internal.engine.EngineClient;
import dev.relock.internal.engine.LockMode;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What undoes one {@link Acquisition}'s traces in Redis: its mode's withdraw script, sent after the attempt it may
 * undo, on that attempt's connection ({@link AcquireCommands}). It leaves the queue, undoes a grant on release the
 * acquisition never took, and on request a fresh hold whose reply was lost; its reply is never waited for.
 *
 * <p>Invariants. Nothing is sent for an acquisition of which nothing may be in Redis: none of its attempts was sent,
 * and no release named it successor. Once the client is marked closed, a queued acquisition's withdraw is left to the
 * close ({@link #atClose}), which sends it before the connection closes. After a withdraw, no grant to an attempt
 * before it is taken ({@link GrantOffer#withdrawn}). Guarded by the acquisition's lock.
 */
final class CleanUp {

    // the acquisition's logger: a withdraw is told among the lines of the acquisition it undoes
    private static final Logger log = LoggerFactory.getLogger(Acquisition.class);

    private final AcquireCommands commands;
    private final GrantOffer grants;
    private final EngineClient core;
    private final LockMode mode;
    private final String name;
    private final String owner;
    // set by the acquisition's first step: it waits in the queue in Redis, not a single try
    private boolean queued;
    // something of the acquisition may be in Redis (an attempt, or a release that named it successor)
    private boolean touched;
    // ended without a hold after the client was marked closed: left in the waiting room for close() to withdraw
    private boolean awaitsClose;

    CleanUp(AcquireCommands commands, GrantOffer grants, EngineClient core, LockMode mode, String name, String owner) {
        this.commands = commands;
        this.grants = grants;
        this.core = core;
        this.mode = mode;
        this.name = name;
        this.owner = owner;
    }

    /** The acquisition waits in the queue in Redis ({@code queued}), or tries once. */
    void begin(boolean queued) {
        this.queued = queued;
    }

    /** Something of the acquisition may be in Redis from now on: an attempt is sent, or a release names it. */
    void touched() {
        touched = true;
    }

    /** Whether something of the acquisition may be in Redis. */
    boolean isTouched() {
        return touched;
    }

    /** Leaves the queue (and undoes a fresh hold whose reply was lost, if {@code undoFreshHold}); logs a failure. */
    void withdraw(boolean undoFreshHold) {
        if (!touched) {
            // it waited in its line only: Redis has nothing of it
            return;
        }
        if (queued && core.isClosed()) {
            // close() withdraws the queued acquisitions itself, before it closes the connection (leftForClose)
            return;
        }
        send(undoFreshHold).whenComplete((undone, error) -> {
            if (error != null) {
                log.debug("{} '{}': withdrawing {} failed; its queue entry expires by itself: {}",
                        mode.description, name, owner, error.toString());
            }
        });
    }

    /**
     * The acquisition ended, with a hold or not ({@code held}): returns whether it is left in the waiting room for the
     * close to withdraw, which walks the room (queued, no hold, and the client marked closed, after which
     * {@link #withdraw} sends nothing).
     */
    boolean leftForClose(boolean held) {
        boolean left = queued && !held && core.isClosed();
        awaitsClose |= left;
        return left;
    }

    /**
     * The client is closing: sends the withdraw of an acquisition left for it ({@link #leftForClose}), undoing a fresh
     * hold too if {@code undoFreshHold} (an attempt was in flight); null if none was left.
     */
    CompletableFuture<Long> atClose(boolean undoFreshHold) {
        if (!awaitsClose) {
            return null;
        }
        awaitsClose = false;
        return send(undoFreshHold);
    }

    private CompletableFuture<Long> send(boolean undoFreshHold) {
        // no grant to an attempt before it may be taken any more, even if its message arrives later (while the
        // acquisition backs off)
        grants.withdrawn();
        return commands.withdraw(undoFreshHold);
    }

    @Override
    public String toString() {
        return "touched=" + touched;
    }
}
