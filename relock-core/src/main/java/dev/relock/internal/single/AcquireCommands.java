package dev.relock.internal.single;

import dev.relock.RelockException;
import dev.relock.ReplicationGuard;
import dev.relock.internal.engine.LockKeys;
import dev.relock.internal.engine.LockMode;
import dev.relock.internal.redis.RedisCalls;
import io.lettuce.core.ScriptOutputType;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * What one {@link Acquisition} sends to Redis: its mode's acquire script, the replication guard's {@code WAIT} and its
 * mode's withdraw script, all on the connection of its latest attempt, so that a WAIT and a withdraw reach Redis after
 * the attempt they follow. Each command is handed to Lettuce and its reply returned as a future, never waited for; a
 * send that throws gives a failed future. Guarded by the acquisition's lock, which is held while each is sent.
 */
final class AcquireCommands {

    private final SingleServerEngine engine;
    private final ModeScripts scripts;
    private final LockKeys keys;
    private final String owner;
    // the lease as the scripts take it
    private final String lease;
    // the acquire script's arguments after the wake-up route, for an attempt that offers to take no grant
    private final String[] extraArgs;
    // the connection of the latest attempt; the shared connection before the first
    private RedisCalls calls;

    AcquireCommands(SingleServerEngine engine, LockMode mode, LockKeys keys, String owner, long leaseMillis,
            String[] extraArgs) {
        this.engine = engine;
        this.scripts = ModeScripts.of(mode);
        this.keys = keys;
        this.owner = owner;
        this.lease = engine.leaseText(leaseMillis);
        this.extraArgs = extraArgs;
        this.calls = engine.calls();
    }

    /**
     * The connection the next attempt goes on: the shared one, or with a replication guard on Cluster the one to the
     * master of the lock's slot, which may still be opening.
     */
    CompletableFuture<RedisCalls> route() {
        return engine.routes().acquisitionCalls(engine.routes().slotOf(keys.lock()));
    }

    /**
     * Sends an attempt on {@code on}, which the commands after it follow.
     *
     * @param waitMillis how long the owner tells the script it waits (0: one try)
     * @param grantFor the attempt's id when it offers to take a grant on release, else 0 ({@code extraArgs} then)
     */
    CompletableFuture<List<Long>> acquire(RedisCalls on, long waitMillis, long grantFor) {
        calls = on;
        String wakeRoute = engine.routes().wakeRoute(keys);
        String[] args = grantFor != 0
                ? scripts.acquireArgs(owner, lease, 0, waitMillis, engine.graceMillis(), wakeRoute,
                        Long.toString(grantFor))
                : scripts.acquireArgs(owner, lease, 0, waitMillis, engine.graceMillis(), wakeRoute, extraArgs);
        try {
            return calls.runTimed(scripts.acquire, ScriptOutputType.MULTI, keys.all(), args);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** {@code WAIT} for the guard's replicas, which counts the latest attempt's write: how many acknowledged it. */
    CompletableFuture<Long> awaitReplicas(ReplicationGuard guard) {
        try {
            return calls.awaitReplicas(guard);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * Sends the withdraw: leaves the queue, undoes a grant on release to any attempt sent before it, and with
     * {@code undoFreshHold} a hold taken once (see withdraw.lua).
     */
    CompletableFuture<Long> withdraw(boolean undoFreshHold) {
        return engine.routes().cleanUpOn(calls, scripts.withdraw, keys.all(),
                scripts.withdrawArgs(owner, undoFreshHold, engine.graceMillis(), engine.routes().wakeRoute(keys),
                        engine.lastAttemptId()));
    }

    /** No NOSCRIPT fallback of {@code reply}'s command may follow a withdraw sent after this. */
    void abandon(CompletableFuture<?> reply) {
        calls.abandon(reply);
    }

    /** The failure of the acquisition of {@code name} for {@code error}, naming the server. */
    RelockException failure(Throwable error, String name) {
        return calls.failure(error, "acquire", name);
    }

    /** The server the latest attempt went to. */
    String address() {
        return calls.address();
    }
}
