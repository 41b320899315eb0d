package dev.relock.internal.redlock;

import dev.relock.internal.engine.EngineClient;
import dev.relock.internal.engine.Hold;
import dev.relock.internal.engine.IoThreads;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import java.util.function.ToLongFunction;

/**
 * Reporting a hold lost: marked lost once (under the dispatch lock, see {@link RedlockEngine}), its owner and the
 * listeners told, and only then what is left of it on the nodes cleaned up ({@link CleanUps#lost}). Thread-safe;
 * from an I/O thread the report runs on the event executors while the caller waits.
 */
final class LossReports {

    private final EngineClient core;
    private final NodeSet nodes;
    private final ReentrantLock dispatch;
    private final CleanUps cleanUps;

    LossReports(EngineClient core, NodeSet nodes, ReentrantLock dispatch, CleanUps cleanUps) {
        this.core = core;
        this.nodes = nodes;
        this.dispatch = dispatch;
        this.cleanUps = cleanUps;
    }

    /**
     * Marks a hold lost, tells the listeners once, and cleans up what is left of it on the nodes. From any
     * thread; on an I/O thread, all of it runs on the event executors while the caller waits.
     */
    void report(Hold hold, String reason) {
        IoThreads.offIo(nodes.timer(), () -> reportHere(hold, reason, () -> hold.lose(reason)));
    }

    /**
     * As {@link #report}, for the lease keeper at a hold's deadline, unless a lease extension confirmed since the
     * keeper looked has moved the deadline ({@link Hold#loseAtDeadline}). Any thread.
     */
    void reportAtDeadline(Hold hold, String reason, ToLongFunction<Hold> deadlineOf) {
        IoThreads.offIo(nodes.timer(), () -> reportHere(hold, reason,
                () -> hold.loseAtDeadline(core.ticker().nanoTime(), deadlineOf, reason)));
    }

    /** {@code lose} marks the hold lost, and says whether it did; the rest follows only if it did. */
    private void reportHere(Hold hold, String reason, BooleanSupplier lose) {
        dispatch.lock();
        try {
            // under the dispatch lock: a renewal, extension or restore checks under it that the hold is held, so
            // none of this hold is sent after it is lost, and none reaches a node after the clean-up
            if (!lose.getAsBoolean()) {
                return;
            }
        } finally {
            dispatch.unlock();
        }
        core.tellLost(hold, reason);
        // only now, with the owner and the listeners told: the clean-up frees the lock on the nodes before the lease
        // ends there, so another client could take it at once (an owner told after that would have overlapped it)
        if (!core.isClosed()) {
            cleanUps.lost(hold);
        }
    }
}
