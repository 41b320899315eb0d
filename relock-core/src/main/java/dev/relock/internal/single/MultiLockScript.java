package dev.relock.internal.single;

import dev.relock.RedisUnavailableException;
import dev.relock.RelockException;
import dev.relock.ReplicationGuard;
import dev.relock.ReplicationShortfallException;
import dev.relock.internal.engine.EngineClient;
import dev.relock.internal.engine.EngineLock;
import dev.relock.internal.engine.Hold;
import dev.relock.internal.engine.IoThreads;
import dev.relock.internal.engine.LockMode;
import dev.relock.internal.engine.LockEvents;
import dev.relock.internal.redis.RedisCalls;
import dev.relock.internal.script.SingleServerScripts;
import io.lettuce.core.ScriptOutputType;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A multi-lock's first try: the write locks of all its names in one script (multi-acquire.lua), all or none, without
 * queueing, over the acquisitions' connection so that a replication guard's {@code WAIT} counts it; undone in order
 * when its outcome is unknown or the guard falls short. Where one script cannot take them all, the caller takes the
 * locks one by one ({@code OrderedMultiLock}).
 *
 * <p>Any thread but an I/O thread; the holds are the calling thread's.
 */
final class MultiLockScript {

    // the engine's log category, the one users set levels for
    private static final Logger log = LoggerFactory.getLogger(SingleServerEngine.class);

    private final EngineClient core;
    private final RedisCalls calls;
    private final Routes routes;
    private final LockEvents events;
    private final IdentityRecord identityRecord;
    // puts a new hold in the client's table and under the lease keeper's watch
    private final Consumer<Hold> track;
    private final ScheduledExecutorService timer;
    // the highest acquisition attempt id handed out so far
    private final LongSupplier lastAttemptId;
    private final String graceMillis;

    MultiLockScript(EngineClient core, RedisCalls calls, Routes routes, LockEvents events,
            IdentityRecord identityRecord, Consumer<Hold> track, ScheduledExecutorService timer,
            LongSupplier lastAttemptId, String graceMillis) {
        this.core = core;
        this.calls = calls;
        this.routes = routes;
        this.events = events;
        this.identityRecord = identityRecord;
        this.track = track;
        this.timer = timer;
        this.lastAttemptId = lastAttemptId;
        this.graceMillis = graceMillis;
    }

    /**
     * Takes the write locks of {@code locks} for the current thread in one script, all or none,
     * without queueing; null when one was not free or the thread holds one of them already, and
     * on Cluster when the names are in more than one slot (a script may touch one slot only): the
     * caller then takes them one by one.
     */
    List<Hold> tryWriteLockAll(List<EngineLock> locks, long leaseMillis, boolean renewed) {
        core.ensureOpen();
        if (routes.cluster() && locks.stream().map(lock -> routes.slotOf(lock.keys().lock())).distinct().count() > 1) {
            return null;
        }
        String owner = core.ownerOfCurrentThread();
        List<String> keys = new ArrayList<>();
        for (EngineLock lock : locks) {
            if (core.holds().get(lock.keys(), LockMode.WRITE, owner) != null
                    || core.holds().get(lock.keys(), LockMode.READ, owner) != null) {
                return null;
            }
            keys.addAll(List.of(lock.keys().all()));
        }
        // on the acquisitions' connection, so a guard's WAIT counts it and the undo follows in order
        RedisCalls acquiring = calls.await(routes.acquisitionCalls(routes.slotOf(locks.get(0).keys().lock())),
                "multi-lock", null);
        // the lease counts from here, once the connection is open
        long sent = core.ticker().nanoTime();
        List<Long> reply;
        try {
            reply = acquiring.await(IoThreads.offIo(timer, () -> acquiring.<List<Long>>run(
                    SingleServerScripts.MULTI_ACQUIRE, ScriptOutputType.MULTI, keys.toArray(String[]::new), owner,
                    Long.toString(leaseMillis))), "multi-lock", null);
        } catch (RedisUnavailableException e) {
            // it may still be applied
            undoAll(acquiring, locks, owner);
            throw e;
        } catch (RelockException e) {
            if (routes.refreshIfMoved(e) != null) {
                // not run: the caller goes on lock by lock, and each acquisition follows the slot
                return null;
            }
            throw e;
        }
        if (reply.get(0) != 1 || !replicated(acquiring, locks, owner)) {
            return null;
        }
        return handOut(locks, owner, reply, leaseMillis, renewed, sent);
    }

    /**
     * Whether the replication guard, if any, counted enough replicas for the locks just taken; if not, they are undone.
     *
     * @throws ReplicationShortfallException if too few replicas acknowledged and the guard says to fail
     */
    private boolean replicated(RedisCalls acquiring, List<EngineLock> locks, String owner) {
        ReplicationGuard guard = core.settings().replicationGuard();
        if (guard == null) {
            return true;
        }
        long acknowledged;
        try {
            acknowledged = acquiring.await(IoThreads.offIo(timer, () -> acquiring.awaitReplicas(guard)),
                    "multi-lock", null);
        } catch (RelockException e) {
            undoAll(acquiring, locks, owner);
            throw e;
        }
        if (acknowledged < guard.replicas()) {
            undoAll(acquiring, locks, owner);
            if (guard.onShortfall() == ReplicationGuard.OnShortfall.FAIL) {
                throw new ReplicationShortfallException(locks.get(0).name(), acknowledged, guard.replicas(),
                        acquiring.address());
            }
            // the caller goes on lock by lock, each acquisition guarded by itself
            return false;
        }
        return true;
    }

    /** The holds of the locks the script took, with their fencing tokens from its reply, tracked and named. */
    private List<Hold> handOut(List<EngineLock> locks, String owner, List<Long> reply, long leaseMillis,
            boolean renewed, long sent) {
        List<Hold> taken = new ArrayList<>();
        for (int i = 0; i < locks.size(); i++) {
            EngineLock lock = locks.get(i);
            Hold hold = new Hold(lock.name(), lock.keys(), LockMode.WRITE, owner, reply.get(i + 1),
                    leaseMillis, renewed, sent);
            // the multi-lock takes them for the calling thread
            hold.acquiredOn(Thread.currentThread().getName());
            track.accept(hold);
            identityRecord.nameHolder(hold);
            events.held(hold);
            taken.add(hold);
            log.debug("lock '{}' acquired by {} with fencing token {} (multi-lock, one script)",
                    hold.lockName, owner, hold.fencingToken);
        }
        return taken;
    }

    /** Undoes every fresh hold of {@code owner} on {@code locks}, in order on {@code on}, without waiting. */
    private void undoAll(RedisCalls on, List<EngineLock> locks, String owner) {
        IoThreads.offIo(timer, () -> {
            for (EngineLock lock : locks) {
                routes.cleanUpOn(on, ModeScripts.WRITE.withdraw, lock.keys().all(),
                        ModeScripts.WRITE.withdrawArgs(owner, true, graceMillis, routes.wakeRoute(lock.keys()),
                                lastAttemptId.getAsLong()));
            }
        });
    }
}
