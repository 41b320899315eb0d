package dev.relock.faults;

import dev.relock.LeaseLostException;
import dev.relock.RelockClient;
import dev.relock.RelockLock;
import dev.relock.fencing.RedisFence;
import io.lettuce.core.api.sync.RedisCommands;
import java.sql.Connection;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * What one thread of a {@link FaultWorker} works with: its id in the history, the worker's client and resource
 * connection (both thread-safe, shared by the worker's threads), a SQL connection of its own, and the run's end.
 * Confined to its thread, except {@link #holders}, which the lease-lost listener reads.
 *
 * @param id the thread's worker id: the process's id when it runs one thread, else {@code <process>.<n>}
 * @param index which of the process's threads it is, from 1; workloads give their threads roles by it
 * @param history the process's history file
 * @param client the process's relock client
 * @param resource the resource Redis (counter, registers, the condition's queue, the latch's round)
 * @param fence fenced writes on {@link #resource}
 * @param sql the thread's connection to the fenced SQL table
 * @param holders {@code <lock>/<token>} to the id of the thread holding it, so a LOST notice names its holder
 * @param endNanos when the run ends, on System.nanoTime()
 * @param random the thread's own random
 */
record WorkerThread(String id, int index, HistoryWriter history, RelockClient client,
        RedisCommands<String, String> resource, RedisFence fence, Connection sql, Map<String, String> holders,
        long endNanos, Random random) {

    void log(EventKind kind, long token, String detail) {
        history.append(id, kind, token, detail);
    }

    boolean running() {
        return System.nanoTime() - endNanos < 0;
    }

    /** Nanoseconds left of the run, at least 1. */
    long nanosLeft() {
        return Math.max(1, endNanos - System.nanoTime());
    }

    /** Logs that this thread holds {@code lock} with {@code token} and remembers it for a LOST notice. */
    void acquired(String lock, long token, Claim claim) {
        holders.put(lock + "/" + token, id);
        log(EventKind.ACQUIRED, token, claim.detail());
    }

    /** Logs a failure; pauses 50 ms after Redis trouble, so a worker does not spin on failing servers. */
    void failed(String what, Throwable e) throws InterruptedException {
        log(EventKind.ERROR, 0, what + describe(e));
        Thread.sleep(50);
    }

    /**
     * Gives up the holds of {@code lock} an earlier section could not release (unlock failed while Redis was away, so
     * the hold stayed this thread's): otherwise the next acquisition would re-enter it instead of acquiring afresh.
     *
     * @return whether none is left
     */
    boolean releaseLeftoverHolds(RelockLock lock) throws InterruptedException {
        while (lock.getHoldCount() > 0) {
            try {
                lock.unlock();
            } catch (LeaseLostException e) {
                // that hold was lost; it is gone from this thread all the same
            } catch (RuntimeException e) {
                failed("leftover hold: ", e);
                return false;
            }
        }
        return true;
    }

    /**
     * Takes {@code lock} as {@code claim} says, waiting no longer than the run lasts, and logs each step: leftover
     * holds given up, REQUEST, then ACQUIRED, or the ERROR that ended the attempt.
     *
     * @return the hold's fencing token (0 when it has none), or empty when the lock was not taken
     */
    OptionalLong lockFor(RelockLock lock, Claim claim) throws InterruptedException {
        if (!releaseLeftoverHolds(lock)) {
            return OptionalLong.empty();
        }
        log(EventKind.REQUEST, 0, claim.detail());
        long token;
        try {
            if (!lock.tryLock(nanosLeft(), TimeUnit.NANOSECONDS)) {
                log(EventKind.ERROR, 0, "not acquired before the run ended");
                return OptionalLong.empty();
            }
            token = lock.fencingToken().orElse(0);
        } catch (RuntimeException e) {
            failed("", e);
            return OptionalLong.empty();
        }
        acquired(claim.lock(), token, claim);
        return OptionalLong.of(token);
    }

    /**
     * Ends the section of the hold with {@code token} by {@code giveUp} (an unlock, a handle's close), logging
     * RELEASING, then RELEASED, RELEASE_LOST, or the ERROR it threw: the hold is given up locally all the same, and
     * its key runs out in Redis by its lease.
     */
    void release(long token, Runnable giveUp) {
        log(EventKind.RELEASING, token, "");
        try {
            giveUp.run();
            log(EventKind.RELEASED, token, "");
        } catch (LeaseLostException e) {
            log(EventKind.RELEASE_LOST, token, describe(e));
        } catch (RuntimeException e) {
            log(EventKind.ERROR, token, "release: " + describe(e));
        }
    }

    static String describe(Throwable e) {
        return e.getClass().getSimpleName() + ": " + String.valueOf(e.getMessage());
    }
}
