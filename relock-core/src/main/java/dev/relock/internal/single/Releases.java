package dev.relock.internal.single;

import dev.relock.LeaseLostException;
import dev.relock.LeaseState;
import dev.relock.RedisUnavailableException;
import dev.relock.RelockException;
import dev.relock.internal.engine.EngineClient;
import dev.relock.internal.engine.Hold;
import dev.relock.internal.engine.HoldTable;
import dev.relock.internal.engine.IoThreads;
import dev.relock.internal.engine.LockKeys;
import dev.relock.internal.engine.LockMode;
import dev.relock.internal.redis.RedisCalls;
import dev.relock.internal.script.LuaScript;
import dev.relock.internal.script.SingleServerScripts;
import io.lettuce.core.ScriptOutputType;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Gives up holds: the owner's release (waited for, or not), the hand-over of a write lock's last release to the next
 * holder in this client ({@link LocalLines}, or a grant on release in the reply for a waiter in Redis), a release sent
 * again after one whose outcome is unknown, and the releases by owner that nobody waits for (a hold nobody saw, a hold
 * reported lost, every hold at close).
 *
 * <p>Order. Every release goes over the connection this client acquires on ({@link Routes#releaseCalls}), so the
 * owner's next acquisition of the lock follows it; a guard's Cluster connection that answers {@code MOVED} gets it
 * once more on the slot's new master. Releases and renewal batches are handed to Lettuce under {@link #dispatch}.
 *
 * <p>Any thread but an I/O thread, unless a method says otherwise.
 */
final class Releases {

    // the engine's log category, the one users set levels for
    private static final Logger log = LoggerFactory.getLogger(SingleServerEngine.class);
    /** release.lua's optional argument, after a write release's own, that asks for a grant to this client's waiter in the reply. */
    private static final String[] GRANT_IN_REPLY = {"1"};

    // held while a renewal batch or a release is handed to Lettuce (SingleServerRenewal.send, release): orders
    // them on the connection, so no renewal follows the release of a hold it renews. Releases that go over a
    // replication guard's connection are not ordered with renewals by it: the scripts refuse to lengthen a hold
    // given up with a delay (renew.lua), and a plain release leaves nothing to renew
    final ReentrantLock dispatch = new ReentrantLock();
    private final EngineClient core;
    private final HoldTable holds;
    // the shared command connection's calls
    private final RedisCalls calls;
    private final Routes routes;
    private final LocalLines localLines;
    private final WaitingRoom waitingRoom;
    private final LossReports losses;
    private final ScheduledExecutorService timer;
    // runs a task on an event executor, or in the calling thread once they are shut down
    private final Executor handOff;
    // the highest acquisition attempt id handed out so far
    private final LongSupplier lastAttemptId;
    private final String graceMillis;
    // a replication guard's waiters take no grants on release, so its releases never ask for one in the reply
    private final boolean guarded;

    Releases(EngineClient core, RedisCalls calls, Routes routes, LocalLines localLines, WaitingRoom waitingRoom,
            LossReports losses, ScheduledExecutorService timer, Executor handOff, LongSupplier lastAttemptId,
            String graceMillis) {
        this.core = core;
        this.holds = core.holds();
        this.calls = calls;
        this.routes = routes;
        this.localLines = localLines;
        this.waitingRoom = waitingRoom;
        this.losses = losses;
        this.timer = timer;
        this.handOff = handOff;
        this.lastAttemptId = lastAttemptId;
        this.graceMillis = graceMillis;
        this.guarded = core.settings().replicationGuard() != null;
    }

    /**
     * Gives up one hold, from whatever thread; when it is the owner's last and {@code delayMillis}
     * is positive, the hold stays taken in Redis until that long from now, no longer renewed.
     *
     * @param byHandle given up by a handle, which cannot be closed twice: when Redis cannot be reached the hold
     *     is given up here all the same (Redis keeps a count one too high until the owner's next release or
     *     re-entry writes its own; the owner's last release deletes every hold whatever the count)
     */
    void release(Hold hold, long delayMillis, boolean byHandle) {
        core.ensureOpen();
        if (delayMillis > 0 && hold.mode == LockMode.WRITE && hold.holds() <= 1
                && holds.get(hold.keys, LockMode.READ, hold.owner) != null) {
            // the read hold lives in the same hash: its renewals would keep the write hold past the delay, and
            // cutting the hash to the delay would end the read hold with it
            throw new IllegalStateException("releaseAfter of the write lock of '" + hold.lockName
                    + "' while its owner also holds the read lock (a downgrade): release the read lock first,"
                    + " or close() the write lock");
        }
        if (hold.state() == LeaseState.LOST) {
            throw lostAtRelease(hold);
        }
        boolean last = hold.holds() <= 1;
        ReleaseInFlight sent;
        try {
            sent = sendOwnersRelease(hold, last, delayMillis);
        } catch (RelockException e) {
            releaseFailed(hold, last, false, byHandle);
            throw e;
        }
        Object reply;
        try {
            reply = calls.await(sent.reply, sent.handedOver, "release", hold.lockName);
        } catch (RelockException e) {
            releaseFailed(hold, last, sent.named, byHandle);
            throw e;
        }
        releaseAnswered(sent, reply);
    }

    /**
     * Gives up the last hold of {@code hold}'s owner (every hold it has of the lock in Redis) as {@link #release} does,
     * without waiting for the reply in the calling thread: for a caller that is no thread (a condition's await for a
     * handle). Any thread but an I/O thread.
     *
     * @return a stage that completes once released, exceptionally with what {@link #release} would throw; on an event
     *     executor (a loss found here is told to the client's listeners there), or the calling thread when it fails
     *     before anything was sent
     */
    CompletableFuture<Void> releaseLastAsync(Hold hold) {
        CompletableFuture<Void> released = new CompletableFuture<>();
        ReleaseInFlight sent;
        try {
            core.ensureOpen();
            if (hold.state() == LeaseState.LOST) {
                throw lostAtRelease(hold);
            }
            sent = sendOwnersRelease(hold, true, 0);
        } catch (RelockException e) {
            releaseFailed(hold, true, false, true);
            return CompletableFuture.failedFuture(e);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        calls.within(sent.reply, sent.handedOver, "release", hold.lockName).whenComplete((reply, error) ->
                handOff.execute(() -> {
                    try {
                        if (error != null) {
                            releaseFailed(hold, true, sent.named, true);
                            released.completeExceptionally(error);
                        } else {
                            releaseAnswered(sent, reply);
                            released.complete(null);
                        }
                    } catch (RuntimeException e) {
                        released.completeExceptionally(e);
                    }
                }));
        return released;
    }

    /** A hold found lost before its release was sent: given up here, cleaned up in Redis by owner; what to throw. */
    private LeaseLostException lostAtRelease(Hold hold) {
        if (hold.drop() == 0) {
            holds.remove(hold);
            // clean up in case the key outlived the local view of the lease
            releaseLost(hold);
            losses.wakeLineOf(hold);
        }
        return new LeaseLostException(hold.lockName, hold.lostReason());
    }

    /**
     * A release sent: its reply, and the stage that completes after what runs on the reply (the hand-over to the
     * lock's next holder in this client), whatever its outcome.
     *
     * @param named whether the release named a successor from the lock's line, whose hand-over then speaks for the line
     */
    private record ReleaseInFlight(Hold hold, boolean last, CompletableFuture<Object> reply,
            CompletableFuture<Object> handedOver, boolean named) {
    }

    /**
     * Sends the release of one hold ({@code last}: of every hold of the owner in Redis), with the hand-over of a
     * write lock's last release.
     */
    private ReleaseInFlight sendOwnersRelease(Hold hold, boolean last, long delayMillis) {
        // the write lock's last release hands over: it may name a successor from the lock's line (LocalLines), and a
        // grant to a waiter of this client comes back in its reply. Only while one waits here (in the line or in
        // Redis): without, a grant to a waiter that joined meanwhile is published, as every other grant is, and the
        // release keeps its plain integer reply. Never with a delay, nor with a replication guard, whose waiters take
        // no grants (and whose releases go over the guard's connection). Marks the hold releasing: from here on no
        // thread of this client joins the line behind it
        LocalLines.Line handOver = last && hold.mode == LockMode.WRITE
                ? localLines.beginHandOver(hold, delayMillis == 0 && !guarded,
                        () -> waitingRoom.waitsFor(hold.keys.lock()))
                : null;
        boolean grantsInReply = handOver != null;
        LocalLines.Succession[] named = {null};
        // the last local hold drops every hold in Redis, so a re-entry whose reply was lost
        // cannot keep the lock alive
        String[] args = last && delayMillis > 0
                ? new String[] {hold.owner, ModeScripts.of(hold.mode).kind, Long.toString(delayMillis),
                        routes.wakeRoute(hold.keys), Long.toString(hold.fencingToken)}
                : grantsInReply
                        ? withSuccessor(releaseArgs(hold, "all"), GRANT_IN_REPLY)
                        : releaseArgs(hold, last ? "all" : Integer.toString(hold.holds() - 1));
        LuaScript script = last && delayMillis > 0
                ? SingleServerScripts.RELEASE_AFTER : ModeScripts.of(hold.mode).release;
        ScriptOutputType type = grantsInReply ? ScriptOutputType.VALUE : ScriptOutputType.INTEGER;
        // a renewal either went out before this release or sees the hold releasing and is not sent. One that went
        // out before may still reach Redis after a release-after sent over the guard's connection: renew.lua
        // leaves the lease it cut to the delay (the hold's mark). Taken in the thread that sends (never while
        // offIo waits for an executor, whose task might wait for it)
        CompletableFuture<Object> sent;
        try {
            sent = IoThreads.offIo(timer, () -> {
                if (handOver != null) {
                    named[0] = localLines.nameSuccessor(handOver,
                            successor -> dispatchRelease(hold, last, script, type, withSuccessor(args, successor)));
                    if (named[0] != null) {
                        return named[0].sent();
                    }
                }
                return dispatchRelease(hold, last, script, type, args);
            });
        } catch (RuntimeException e) {
            if (handOver != null && named[0] == null) {
                // nothing was sent: the hand-over ends here
                localLines.handedOver(hold.keys, handOver, false);
            }
            throw e;
        }
        LocalLines.Succession succession = named[0];
        // on the I/O thread that reads the reply, whether or not this thread still waits for it; this thread
        // goes on once it ran, so the next holder is woken first
        CompletableFuture<Object> handedOver = sent;
        if (succession != null) {
            handedOver = sent.whenComplete(
                    (reply, error) -> handOver(hold.keys, handOver, succession, reply, error));
        } else if (handOver != null) {
            handedOver = sent.whenComplete((reply, error) -> deliverGrant(hold.keys, handOver, reply, error));
        }
        return new ReleaseInFlight(hold, last, sent, handedOver, succession != null);
    }

    /** A release whose outcome is unknown (no reply in time, or refused): given up here as far as it goes. */
    private void releaseFailed(Hold hold, boolean last, boolean named, boolean byHandle) {
        if (last) {
            // stop renewing: the lease runs out in Redis by itself
            holds.remove(hold);
            hold.released();
            if (!named) {
                losses.wakeLineOf(hold);
            }
        } else if (byHandle) {
            hold.drop();
        }
    }

    /**
     * Redis answered a release: the holds it left, or -1 when it no longer had the lock.
     *
     * @throws LeaseLostException if it no longer had the lock: the hold is reported lost
     */
    private void releaseAnswered(ReleaseInFlight sent, Object reply) {
        Hold hold = sent.hold;
        long left = reply instanceof String text ? ReleaseReply.holdsLeft(text) : (Long) reply;
        if (left < 0) {
            losses.reportLost(hold, "Redis no longer had it at release (lease ran out, key deleted or forced open)");
            if (hold.drop() == 0) {
                holds.remove(hold);
                if (!sent.named) {
                    losses.wakeLineOf(hold);
                }
            }
            throw new LeaseLostException(hold.lockName, hold.lostReason());
        }
        if (sent.last) {
            holds.remove(hold);
            if (!sent.named) {
                losses.wakeLineOf(hold);
            }
            hold.drop();
            hold.released();
            if (log.isDebugEnabled()) { // spares the varargs array and the boxing when off
                log.debug("{} '{}' released by {} (fencing token {}, held {} ms)", hold.mode.description,
                        hold.lockName, hold.owner, hold.fencingToken, hold.heldMillis(core.ticker().nanoTime()));
            }
        } else {
            hold.drop();
        }
    }

    /**
     * Undoes the grant with fencing token {@code token} that a release made to {@code owner}, a successor whose
     * acquisition ended before the release's reply came, if nobody took it since (withdraw.lua's ARGV[7]). The
     * successor's own withdraw follows the release's first send, but not a second send after NOSCRIPT or TRYAGAIN,
     * which may run after it and still grant. Without waiting.
     */
    void undoGrant(LockKeys keys, String owner, long token) {
        routes.cleanUpOn(calls, ModeScripts.WRITE.withdraw, keys.all(), owner, ModeScripts.WRITE.kind, "0",
                graceMillis, routes.wakeRoute(keys), Long.toString(lastAttemptId.getAsLong()), Long.toString(token))
                .whenComplete((undone, error) -> {
                    if (error != null) {
                        log.debug("undoing the grant of '{}' to {}, which gave up, failed; it runs out with its lease: {}",
                                keys.lock(), owner, error.toString());
                    }
                });
    }

    /** Sends a release of {@code hold} under the dispatch lock, which orders it after the hold's renewals. */
    private CompletableFuture<Object> dispatchRelease(Hold hold, boolean last, LuaScript script, ScriptOutputType type,
            String[] args) {
        dispatch.lock();
        try {
            if (last) {
                hold.beginRelease();
            }
            return sendRelease(hold, script, type, args);
        } finally {
            dispatch.unlock();
        }
    }

    /** A release script's arguments with a successor's (release.lua's ARGV[7..9]) or {@link #GRANT_IN_REPLY} after them. */
    private static String[] withSuccessor(String[] args, String[] successor) {
        String[] all = Arrays.copyOf(args, args.length + successor.length);
        System.arraycopy(successor, 0, all, args.length, successor.length);
        return all;
    }

    /**
     * The reply of a release that named a successor from the lock's line ({@link LocalLines}). The successor takes
     * the grant the reply carries for it; any other grant to a waiter here goes to that waiter, as in
     * {@link #deliverGrant}. Without a grant for it, the successor tries in Redis, and the line does too once nobody here
     * leads it. Without a reply (or -1 from a second run of a release sent again after a reconnect), Redis may have
     * made the successor the holder: the successor and the line then try once Redis answers again
     * ({@link #wakeWaitersOnceReachable}), and the successor's attempt takes the grant it crosses. On the I/O thread
     * that reads the reply, or the caller's.
     */
    private void handOver(LockKeys keys, LocalLines.Line line, LocalLines.Succession succession, Object reply,
            Throwable error) {
        ReleaseReply.Grant grant = error == null ? ReleaseReply.grant((String) reply) : null;
        if (grant != null && grant.attempt() == succession.attempt()) {
            succession.successor().succession(grant.attempt(), grant.token(), false,
                    () -> localLines.handedOver(keys, line, false));
            return;
        }
        if (grant != null) {
            // a thread of this client that waited in Redis went first: the successor waits behind it, in the line
            succession.successor().passedOver(succession.attempt());
            waitingRoom.granted(keys.lock(), grant.owner(), grant.attempt(), grant.token(),
                    () -> localLines.handedOver(keys, line, false));
            return;
        }
        boolean unknown = error != null || ReleaseReply.holdsLeft((String) reply) < 0;
        succession.successor().succession(succession.attempt(), -1, unknown, () -> {
            localLines.handedOver(keys, line, unknown);
            if (unknown) {
                // once the hand-over is off the line, so a thread that joined it meanwhile is woken too
                wakeWaitersOnceReachable(keys, 0);
            }
        });
    }

    /**
     * Hands a grant on release that came back in the reply of this client's release (release.lua) to the owner's
     * acquisition here. A release with no reply (lost with its connection, timed out, given up) may have granted the
     * lock to a waiter here all the same, and so may the first run of a release that Redis ran twice (a Lettuce
     * client that sends again what was in flight at a reconnect; the second run answers -1): then this client's
     * waiters for the lock try again ({@link #wakeWaitersOnceReachable}), and the one granted takes its grant so.
     * Ends the hand-over counted in for the release ({@link LocalLines#beginHandOver}) once the grant was handled. On
     * the I/O thread that reads the reply, or the caller's.
     */
    private void deliverGrant(LockKeys keys, LocalLines.Line line, Object reply, Throwable error) {
        ReleaseReply.Grant grant = error == null ? ReleaseReply.grant((String) reply) : null;
        if (grant != null) {
            waitingRoom.granted(keys.lock(), grant.owner(), grant.attempt(), grant.token(),
                    () -> localLines.handedOver(keys, line, false));
        } else if (error != null || ReleaseReply.holdsLeft((String) reply) < 0) {
            // the hand-over off the line first, so a thread that joined it meanwhile is woken too
            localLines.handedOver(keys, line, true);
            wakeWaitersOnceReachable(keys, 0);
        } else {
            localLines.handedOver(keys, line, false);
        }
    }

    /**
     * After {@code waitedNanos}, reads the lock's key over the connection this client's attempts on it take, again
     * with {@link RetryBackoff} until Redis answers; then this client's waiters for the lock try again. Not at once:
     * while the connection is down an attempt would be refused, and a waiter with a deadline would fail on it. A read,
     * not a wait for a reconnect event: those come for every connection of the Lettuce client, this one or not.
     */
    private void wakeWaitersOnceReachable(LockKeys keys, long waitedNanos) {
        // only a waiter here when the release ran can have been granted; one that left since withdrew, undoing it
        if (core.isClosed() || !waitingRoom.waitsFor(keys.lock())) {
            return;
        }
        try {
            timer.schedule(() -> {
                if (core.isClosed() || !waitingRoom.waitsFor(keys.lock())) {
                    return;
                }
                // bounded even where the Lettuce client has no timeout of its own (a black-holed connection)
                calls.commands().exists(keys.lock()).toCompletableFuture()
                        .orTimeout(calls.timeoutNanos(), TimeUnit.NANOSECONDS).whenComplete((found, error) -> {
                    if (error == null) {
                        waitingRoom.wakeWaitersOf(keys.lock());
                    } else {
                        wakeWaitersOnceReachable(keys, RetryBackoff.after(waitedNanos));
                    }
                });
            }, waitedNanos, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            // the executor shuts down only with the client, which ends every waiter
        }
    }

    /**
     * Sends the owner's release of every hold of {@code hold}'s lock again, after a release of its last hold whose
     * outcome is unknown (it threw {@link RedisUnavailableException}: it may have run), and waits for the reply: the
     * holds it left, or -1 when Redis no longer had the lock (the first ran, or the lease had run out). Over the
     * connection the first took, after it; from the owner's thread, never an I/O thread.
     *
     * @throws RedisUnavailableException if this one gets no reply either
     */
    Long releaseAgain(Hold hold) {
        core.ensureOpen();
        Object reply = calls.await(sendRelease(hold, ModeScripts.of(hold.mode).release, ScriptOutputType.INTEGER,
                releaseArgs(hold, "all")), "release", hold.lockName);
        return (Long) reply;
    }

    /** As {@link #releaseAgain}, without waiting: fails as it would throw. Any thread but an I/O thread. */
    CompletableFuture<Object> releaseAgainAsync(Hold hold) {
        if (core.isClosed()) {
            return CompletableFuture.failedFuture(core.closedException());
        }
        return calls.within(sendRelease(hold, ModeScripts.of(hold.mode).release, ScriptOutputType.INTEGER,
                releaseArgs(hold, "all")), "release", hold.lockName);
    }

    /** Gives up a hold nobody will see, without waiting: from any thread, I/O threads included. */
    void releaseUnseen(Hold hold) {
        hold.beginRelease();
        holds.remove(hold);
        hold.released();
        releaseInOrder(hold);
        losses.wakeLineOf(hold);
    }

    /**
     * Releases, by owner and in order, the key of a hold reported lost that Redis may still keep (its
     * lease outlived the local deadline, or a renewal got through after it); once per hold, from the
     * owner's unlock or the lease keeper, whichever comes first. The monitor makes the other wait until
     * the release is sent, so an owner's next acquisition of the lock always goes after it and is
     * never the one released.
     */
    void releaseLost(Hold hold) {
        synchronized (hold) {
            if (hold.firstLostRelease()) {
                releaseInOrder(hold);
            }
        }
    }

    /**
     * At close: gives up every hold in the table and sends each one's release, adding the replies to
     * {@code releases}. Nothing waits for them here; the connection is still open.
     */
    void releaseAllAtClose(List<CompletableFuture<?>> releases) {
        for (Hold hold : holds.all()) {
            hold.beginRelease();
            releases.add(calls.run(ModeScripts.of(hold.mode).release, ScriptOutputType.INTEGER, hold.keys.all(),
                    releaseArgs(hold, "all")));
            hold.released();
            holds.remove(hold);
        }
    }

    /** Sends the owner's release of every hold of {@code hold}'s lock, from any thread (see {@link IoThreads}). */
    private void releaseInOrder(Hold hold) {
        IoThreads.offIo(timer, () -> routes.cleanUpOn(routes.releaseCalls(hold.keys.lock()),
                ModeScripts.of(hold.mode).release, hold.keys.all(), releaseArgs(hold, "all")));
    }

    /** The arguments of {@code hold}'s release script; {@code keeps}: the holds the owner keeps, or "all". */
    private String[] releaseArgs(Hold hold, String keeps) {
        return ModeScripts.of(hold.mode).releaseArgs(hold.owner, keeps, graceMillis, routes.wakeRoute(hold.keys),
                hold.fencingToken);
    }

    /**
     * Sends a release script of {@code hold} over {@link Routes#releaseCalls}. A guard's Cluster connection does not
     * follow redirections, so a release refused there with {@code MOVED} (not run) is sent again, once, over the
     * connection to the slot's new master. A caller that gives up on the reply ({@link RedisCalls#await} cancels it)
     * stops both the NOSCRIPT fallback and that second send: nothing of this release may follow what the caller sends
     * next.
     */
    private CompletableFuture<Object> sendRelease(Hold hold, LuaScript script, ScriptOutputType type, String[] args) {
        RedisCalls on = routes.releaseCalls(hold.keys.lock());
        CompletableFuture<Object> sent = on.run(script, type, hold.keys.all(), args);
        if (on == calls) {
            return sent;
        }
        CompletableFuture<Object> reply = new CompletableFuture<>();
        abandonOnCancel(reply, on, sent);
        sent.whenComplete((value, error) -> {
            CompletableFuture<Void> refreshed = error == null ? null : routes.refreshIfMoved(error);
            if (refreshed == null) {
                complete(reply, value, error);
                return;
            }
            refreshed.whenComplete((fresh, failure) -> {
                // reply's monitor orders this against the caller's giving up
                synchronized (reply) {
                    if (reply.isDone()) {
                        return;
                    }
                    RedisCalls next = routes.releaseCalls(hold.keys.lock());
                    CompletableFuture<Object> again = next.run(script, type, hold.keys.all(), args);
                    abandonOnCancel(reply, next, again);
                    again.whenComplete((answer, failed) -> complete(reply, answer, failed));
                }
            });
        });
        return reply;
    }

    /** Once {@code reply} is cancelled (its caller gave up), {@code sent} on {@code on} is abandoned too. */
    private static void abandonOnCancel(CompletableFuture<Object> reply, RedisCalls on, CompletableFuture<Object> sent) {
        reply.whenComplete((value, error) -> {
            if (reply.isCancelled()) {
                on.abandon(sent);
            }
        });
    }

    private static <T> void complete(CompletableFuture<T> future, T value, Throwable error) {
        if (error == null) {
            future.complete(value);
        } else {
            future.completeExceptionally(error);
        }
    }
}
