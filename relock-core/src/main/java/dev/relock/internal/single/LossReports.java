package dev.relock.internal.single;

import dev.relock.LeaseState;
import dev.relock.internal.engine.EngineClient;
import dev.relock.internal.engine.Hold;
import dev.relock.internal.engine.LockMode;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.ToLongFunction;

/**
 * Tells the client of holds it lost: a hold is marked lost once ({@link Hold#lose}), its owner's listeners are told
 * ({@link EngineClient#tellLost}), and the threads waiting in the JVM behind a lost write hold try in Redis.
 *
 * <p>Any thread; a report that runs the user's listeners never runs on the pub/sub thread.
 */
final class LossReports {

    private final EngineClient core;
    private final LocalLines localLines;
    // the Lettuce client's event executors; they shut down only with the client
    private final Executor executor;

    LossReports(EngineClient core, LocalLines localLines, Executor executor) {
        this.core = core;
        this.localLines = localLines;
        this.executor = executor;
    }

    /** Marks a hold lost and tells the listeners, once. */
    void reportLost(Hold hold, String reason) {
        if (hold.lose(reason)) {
            core.tellLost(hold, reason);
            wakeLineOf(hold);
        }
    }

    /**
     * As {@link #reportLost}, for the lease keeper at a hold's deadline, unless a lease extension confirmed since the
     * keeper looked has moved the deadline ({@link Hold#loseAtDeadline}).
     *
     * @return whether the hold is lost now (by this call or an earlier one)
     */
    boolean reportLostAtDeadline(Hold hold, String reason, ToLongFunction<Hold> deadlineOf) {
        if (hold.loseAtDeadline(core.ticker().nanoTime(), deadlineOf, reason)) {
            core.tellLost(hold, reason);
            wakeLineOf(hold);
        }
        return hold.state() == LeaseState.LOST;
    }

    /**
     * force-unlock.lua deleted the lock that {@code owner}, of this client, held for writing with fencing token
     * {@code token}: the hold is reported lost now rather than at its next renewal, and the threads of its line try in
     * Redis. On the pub/sub thread, so the report, which runs the user's listeners, goes to the executor.
     */
    void forcedOpen(String lockKey, String owner, long token) {
        for (Hold hold : core.holds().all()) {
            if (hold.mode == LockMode.WRITE && hold.fencingToken == token && hold.owner.equals(owner)
                    && hold.keys.lock().equals(lockKey)) {
                try {
                    executor.execute(() -> reportLost(hold, "an operator forced it open (force-unlock)"));
                } catch (RejectedExecutionException e) {
                    // the executor shuts down only with the client, whose holds are given up then
                }
            }
        }
    }

    /**
     * A hold of this client is gone or lost, and no release of it named a successor (whose reply then speaks for the
     * line, see {@link Releases}): if it was a write hold, the threads of the lock's line try in Redis (the lock may be
     * free there), unless another owner here leads it.
     */
    void wakeLineOf(Hold hold) {
        if (hold.mode == LockMode.WRITE) {
            localLines.wakeIfUnled(hold.keys);
        }
    }
}
