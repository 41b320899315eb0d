package dev.relock.internal.single;

import dev.relock.LeaseLostException;
import dev.relock.LeaseState;
import dev.relock.internal.engine.Engine;
import dev.relock.internal.engine.EngineClient;
import dev.relock.internal.engine.Hold;
import dev.relock.internal.engine.IoThreads;
import dev.relock.internal.engine.LockKeys;
import dev.relock.internal.engine.LockMode;
import dev.relock.internal.redis.RedisCalls;
import dev.relock.internal.script.SingleServerScripts;
import io.lettuce.core.ScriptOutputType;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.LongFunction;

/**
 * The owner's calls that lengthen a hold it has: a re-entry (one more hold, and the lease set again) and a lease
 * extension. Both are owner-checked scripts that write what this client knows, so one that ran twice or whose reply
 * was lost changes nothing the next call does not set right.
 *
 * <p>The owner's thread, never an I/O thread.
 */
final class HoldExtensions {

    private final EngineClient core;
    // the shared command connection's calls, which renewals take too
    private final RedisCalls calls;
    private final Routes routes;
    private final Releases releases;
    private final LossReports losses;
    private final ScheduledExecutorService timer;
    private final String graceMillis;
    // a lease in ms as the scripts take it
    private final LongFunction<String> leaseText;

    HoldExtensions(EngineClient core, RedisCalls calls, Routes routes, Releases releases, LossReports losses,
            ScheduledExecutorService timer, String graceMillis, LongFunction<String> leaseText) {
        this.core = core;
        this.calls = calls;
        this.routes = routes;
        this.releases = releases;
        this.losses = losses;
        this.timer = timer;
        this.graceMillis = graceMillis;
        this.leaseText = leaseText;
    }

    /**
     * Re-entries are counted in Redis as well as here (a re-entry costs one round trip and proves the lease is
     * still there). The count here is the truth: every script writes the count it is given (the owner's count
     * here, plus or less one), never increments what Redis has, so a script that ran twice or whose reply was
     * lost changes nothing a retry or the next call does not set right, and a failed {@code unlock()} may
     * simply be called again.
     */
    Hold reenter(Hold held, long lease, boolean renewed) {
        String name = held.lockName;
        LockKeys keys = held.keys;
        long sent = core.ticker().nanoTime();
        ModeScripts scripts = ModeScripts.of(held.mode);
        List<Long> reply = calls.await(IoThreads.offIo(timer,
                () -> calls.<List<Long>>run(scripts.acquire, ScriptOutputType.MULTI, keys.all(),
                        scripts.acquireArgs(held.owner, leaseText.apply(lease), held.holds(), 0, graceMillis,
                                routes.wakeRoute(keys)))),
                "re-entry", name);
        if (reply.get(0) < 0) {
            losses.reportLost(held, "Redis no longer had it at re-entry (key expired, deleted or forced open)");
            throw Engine.lostAtReentry(held);
        }
        if (held.state() == LeaseState.LOST) {
            // told lost while the re-entry was on its way (its deadline passed): the hold is being released by
            // owner, whatever Redis said; the re-entry's count in Redis goes with it
            throw Engine.lostAtReentry(held);
        }
        held.reenter(lease, renewed, sent);
        return held;
    }

    /**
     * One renew.lua call for the one hold, over the connection renewals take: an owner-checked extension that only
     * ever lengthens what Redis has, like a renewal, so it and the lease keeper's renewals may reach Redis in any
     * order. A release sent meanwhile (a handle closed by another thread) makes Redis answer 0, or
     * {@link SingleServerRenewal#GIVEN_UP} after a release-after, which is then no loss.
     */
    void extendLease(Hold hold, long leaseMillis) {
        core.ensureOpen();
        long sent = core.ticker().nanoTime();
        CompletableFuture<List<Long>> extension = sendExtension(hold, leaseMillis);
        if (extension == null) {
            throw Engine.releasedAtExtension(hold);
        }
        List<Long> reply = calls.await(extension, "lease extension", hold.lockName);
        long answer = reply.get(0);
        if (answer == SingleServerRenewal.RENEWED) {
            if (hold.leaseExtended(sent, leaseMillis)) {
                return;
            }
            if (hold.state() == LeaseState.LOST) {
                // told lost at its deadline while the extension was on its way, which Redis then granted: the lock
                // must not stay taken by nobody for the new lease
                releases.releaseLost(hold);
                throw new LeaseLostException(hold.lockName, hold.lostReason());
            }
            throw Engine.releasedAtExtension(hold);
        }
        if (hold.releasing() || hold.state() == LeaseState.RELEASED) {
            throw Engine.releasedAtExtension(hold);
        }
        losses.reportLost(hold, SingleServerRenewal.notRenewed(answer, "lease extension"));
        throw new LeaseLostException(hold.lockName, hold.lostReason());
    }

    /** The extension's renew.lua call; null, and nothing sent, when the hold is being released. */
    private CompletableFuture<List<Long>> sendExtension(Hold hold, long leaseMillis) {
        String[] keys = hold.mode == LockMode.WRITE
                ? new String[] {hold.keys.lock()} : new String[] {hold.keys.lock(), hold.keys.leases()};
        String[] args = {hold.owner, Long.toString(leaseMillis), ModeScripts.of(hold.mode).kind};
        // checked and sent under the dispatch lock, as a renewal is: no extension follows a release-after on this
        // connection; one that reaches Redis after a release-after on the guard's is refused there (GIVEN_UP)
        return IoThreads.offIo(timer, () -> {
            releases.dispatch.lock();
            try {
                return hold.releasing() ? null
                        : calls.<List<Long>>run(SingleServerScripts.RENEW, ScriptOutputType.MULTI, keys, args);
            } finally {
                releases.dispatch.unlock();
            }
        });
    }
}
