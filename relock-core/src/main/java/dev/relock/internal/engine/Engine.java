package dev.relock.internal.engine;

import dev.relock.LeaseLostException;
import dev.relock.LockInfo;
import dev.relock.RelockClient;
import dev.relock.RelockCondition;
import dev.relock.RelockCountDownLatch;
import dev.relock.RelockMultiLock;
import dev.relock.RelockSemaphore;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What one kind of deployment does differently, behind the one {@link EngineClient}: how a lock is
 * taken, re-entered, released, inspected and forced open on it. Two implementations: one Redis
 * (standalone, Sentinel, Cluster routing: {@code single.SingleServerEngine}) and N independent masters
 * voting by majority ({@code redlock.RedlockEngine}). Everything else (ids, the hold table, loss
 * reporting, name checks, the lock objects, closing order) is the client's.
 *
 * <p>Every method may be called from any thread, I/O threads included unless it says otherwise; the
 * client has checked names and that it is open before it calls one. Public because the Redlock engine
 * lives in its own package.
 */
public interface Engine {

    /** Where meters and observations of this engine's locks are told. */
    LockEvents events();

    /**
     * A fresh acquisition of one mode of a lock, not started: the caller runs it for a thread, or starts
     * it for a handle. Never a re-entry: {@code owner} holds no hold of {@code keys} in {@code mode}.
     *
     * @param leaseMillis the lease, the client's default when {@code renewed}
     * @param renewed whether the lease keeper renews it
     */
    SteppedAcquisition acquisition(String name, LockKeys keys, LockMode mode, String owner, long leaseMillis,
            boolean renewed);

    /**
     * One more hold of a held lock by its owner: checks that the lease is still there and extends it to
     * {@code leaseMillis} where that is longer. The lock has found {@code held} not lost before it calls this.
     *
     * @return {@code held}, its count one up
     * @throws LeaseLostException made by {@link #lostAtReentry} if Redis no longer has it, or the hold is lost
     *     meanwhile
     */
    Hold reenter(Hold held, long leaseMillis, boolean renewed);

    /** The exception of a re-entry into {@code held} once it is lost: each earlier hold must still be unlocked. */
    static LeaseLostException lostAtReentry(Hold held) {
        return new LeaseLostException(held.lockName, held.lostReason() + "; unlock() the earlier holds first");
    }

    /**
     * Gives up one hold of {@code hold}; when it is the owner's last and {@code delayMillis} is positive, the
     * lock stays taken that long, no longer renewed.
     *
     * @param byHandle given up by a handle, which cannot be closed twice (see the engines for what that changes)
     */
    void release(Hold hold, long delayMillis, boolean byHandle);

    /**
     * Extends the lease of {@code hold} (see {@code LockHandle.extendLease}): Redis, or a majority of the nodes, keeps
     * it at least {@code leaseMillis} from the send, never less than before; the hold's lease end here moves as the
     * confirmation proves, and a renewed hold is renewed for at least {@code leaseMillis} from then on. Never sent
     * after the hold's release. The caller has checked the lease ({@link #checkLease}) and that the hold is not known
     * lost.
     *
     * @throws LeaseLostException if Redis no longer has the hold (it is reported lost first, once), or it was lost at
     *     its deadline meanwhile
     * @throws IllegalStateException if the hold is released, or being released, meanwhile
     * @throws dev.relock.RedisUnavailableException if Redis (a majority) did not answer within the command timeout;
     *     nothing changes here
     */
    void extendLease(Hold hold, long leaseMillis);

    /** The exception of a lease extension of {@code hold} once the hold is given up, or being given up. */
    static IllegalStateException releasedAtExtension(Hold hold) {
        return new IllegalStateException("the lease of " + hold.mode.description + " '" + hold.lockName
                + "' cannot be extended: the hold was given up");
    }

    /**
     * Refuses an explicit lease this engine cannot keep.
     *
     * @param given the lease as the caller wrote it, for the message
     * @throws IllegalArgumentException if {@code leaseMillis} is too short
     */
    void checkLease(String lockName, long leaseMillis, String given);

    /** Deletes the lock whoever holds it; whether it was held. */
    boolean forceUnlock(String name, LockKeys keys);

    /** Whether anyone holds the lock. */
    boolean isLocked(String name, LockKeys keys);

    /** How long the lock stays held unless renewed; empty when free. */
    Optional<Duration> remainingLease(String name, LockKeys keys);

    LockInfo inspect(String name);

    LockInfo inspectSemaphore(String name);

    List<LockInfo> list(String nameGlob);

    RelockSemaphore semaphore(String name);

    /**
     * The condition {@code conditionName} of the write lock {@code lockName} (see {@link dev.relock.RelockCondition});
     * the name is checked.
     */
    RelockCondition condition(String lockName, LockKeys keys, String conditionName);

    /** The count-down latch with this name (see {@link RelockClient#countDownLatch}). */
    RelockCountDownLatch countDownLatch(String name);

    /** A multi-lock of {@code locks}: write locks of distinct names, in key order. */
    RelockMultiLock multiLock(List<EngineLock> locks);

    /** The time of one round trip (to a majority, on Redlock). */
    Duration ping();

    /** How the lock objects' toString() names the deployment, or null for one Redis. */
    String topology();

    /**
     * Writes this client's identity record ({@link ClientRegistry}) whole ({@link RecordWrites#writeWhole}), without
     * waiting; a failure is logged at DEBUG (the next pass writes it again). At start-up and after every pass of the
     * lease keeper; never on a Netty I/O thread.
     */
    void register();

    /**
     * The identity record of client {@code clientId} ({@link ClientRegistry}), or an empty map when it has none;
     * waits at most the command timeout.
     *
     * @throws dev.relock.RedisUnavailableException if no reply came in time
     */
    Map<String, String> identityRecord(String clientId);

    /**
     * Releases every hold of the client, fails every acquisition under way and closes the connections.
     * Called once, by the client, after it is marked closed.
     */
    void close();
}
