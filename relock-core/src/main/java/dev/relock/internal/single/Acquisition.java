package dev.relock.internal.single;

import dev.relock.RedisUnavailableException;
import dev.relock.RelockException;
import dev.relock.ReplicationGuard;
import dev.relock.ReplicationShortfallException;
import dev.relock.internal.engine.Hold;
import dev.relock.internal.engine.LockKeys;
import dev.relock.internal.engine.LockMode;
import dev.relock.internal.engine.SteppedAcquisition;
import dev.relock.internal.engine.LockEvents;
import dev.relock.internal.redis.RedisCalls;
import io.lettuce.core.ScriptOutputType;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.LongFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One fresh acquisition by one owner, as a state machine that no thread waits in: attempts, the
 * wait between them, and the clean-up when the wait ends without success. The blocking API waits
 * for its outcome in the caller's thread ({@link #run}); the asynchronous API hands out a future
 * of it ({@link #startAsync}). The outcome, and the rule that events are handled one at a time
 * under {@code lock}, are {@link SteppedAcquisition}'s.
 *
 * <p>Design notes. The owner joins the queue in Redis. Its next attempt is driven by whichever
 * comes first: a wake-up message naming it (pub/sub thread, through the {@link WaitingRoom}), a
 * timer at the holder's lease end or its own deadline (the client's event executors; the far ones
 * wait on its hashed wheel, see {@link SteppedAcquisition#armTimer}), or, when
 * Redis is unreachable, a back-off timer ({@link RetryBackoff}, cut to the wait's deadline: the last
 * attempt of a wait is sent by its deadline, and if Redis is still unreachable then, that failure is the
 * outcome; a single try has no back-off and fails at once). It never polls at a fixed rate. Events also come from the attempt's reply (a Lettuce I/O thread), {@link #cancel} (any
 * thread) and the client's close ({@link #failAtClose}). On a Cluster with sharded pub/sub the
 * wake-ups come on the lock's own channel, which the owner listens to from its first failed attempt
 * until it finishes ({@link ShardWakeChannels}); a confirmation of that subscription wakes it too.
 * <ul>
 *   <li>Every field marked so is guarded by {@code lock}. It is held for book-keeping and while a
 *       command is handed to Lettuce, never while waiting for anything; so a withdraw is always
 *       sent after the attempt it may undo, on the same connection, and reaches Redis after it.
 *   <li>At most one attempt is in flight. A wake-up that arrives while it is in flight is kept and
 *       starts the next attempt as soon as the reply says "not acquired", so a release that
 *       happens while the reply is on its way is never missed.
 *   <li>The outcome completes once, outside the lock: with the hold, with null (the wait ended
 *       or the acquisition was cancelled), or exceptionally.
 * </ul>
 *
 * <p>With a {@link ReplicationGuard}, an attempt that took the lock is followed by {@code WAIT}
 * on the same connection ({@link Routes#acquisitionCalls}), which counts the
 * attempt's write; the WAIT is then the one command in flight, and the hold is handed out only
 * when enough replicas acknowledged. Too few: the hold is undone by the withdraw script, and the
 * acquisition fails, ends or tries again as the guard says. Cancelled meanwhile: the withdraw
 * undoes the hold, as for an attempt in flight. On Cluster that connection goes to the master of
 * the lock's slot and follows no redirection: while it is being opened, or after an attempt was
 * answered MOVED (not run) and until a fresh topology is in, the wait for it is what is in flight,
 * and the attempt is sent (again) on the slot's master when it is over, at most
 * {@value #MAX_REDIRECTS} times in a row.
 *
 * <p>Grant on release. A queued write or read attempt (no guard) carries an id, and a release may
 * make the head writer, or the readers at the head, holders at once and say so in their wake-up
 * messages ({@link #granted}): the hold then needs no attempt of its own. The grant's lease runs
 * from when Redis ran this owner's latest attempt, so the hold counts it from when that attempt was
 * sent. A grant is taken only for the latest attempt sent and only once its reply is in (an older
 * attempt's grant may have been undone by a withdraw since); an attempt that reaches Redis after
 * the grant takes it as its reply. A grant that arrives while its attempt is in flight is taken by
 * the next attempt, not on the word of that attempt's "not acquired": the reply may come from a run
 * of the attempt sent again after a reconnect, after commands that undid the grant. A grant the
 * acquisition never takes is undone by the withdraw that every unsuccessful end sends.
 *
 * <p>Ambiguity: an attempt whose reply times out, or that is cancelled while in flight, may
 * still be applied by Redis. It is then followed, in order, by the mode's withdraw script, which
 * undoes a fresh acquisition and leaves the queue; nothing ownerless lingers until its lease runs
 * out.
 */
final class Acquisition extends SteppedAcquisition implements ChannelWaiter {

    private static final Logger log = LoggerFactory.getLogger(Acquisition.class);
    // as Lettuce's cluster connection: a slot that moves more often than this is failing over in a loop
    static final int MAX_REDIRECTS = 5;

    private final SingleServerEngine engine;
    private final ModeScripts scripts;
    private final String[] extraArgs;
    private final LongFunction<RuntimeException> refusal;
    // guarded by lock: the connection of the last attempt, which its WAIT and withdrawals follow, so
    // they reach Redis in order; the shared connection before the first attempt
    private RedisCalls calls;
    // null when fresh holds are handed out without waiting for replicas
    private final ReplicationGuard guard;
    // whether queued attempts offer to take a grant on release (see the class notes)
    private final boolean takesGrants;

    // all guarded by lock; set once by begin()
    private boolean queued;
    // the attempt sent whose reply is not handled yet, or the replication guard's WAIT after an
    // attempt that took the lock, or (Cluster with a guard) the opening of the connection for the
    // next attempt or the topology refresh after a MOVED; or null
    private CompletableFuture<?> inFlight;
    // MOVED replies since the last attempt that reached the slot's master
    private int redirects;
    // a wake-up arrived while the attempt was in flight
    private boolean woken;
    // the id and send time of the latest attempt (ids are unique in the client, from 1); 0 once a
    // withdraw was sent after it: its grant, if any, is undone and must not be taken
    private long attemptId;
    private long attemptSentNanos;
    // a grant for the latest attempt arrived while that attempt was in flight
    private boolean grantWaiting;
    // what runs once that grant was handled (the attempt's reply came: it took the grant, or the next attempt is sent
    // to take it, or it was dropped): the end of the hand-over
    // that made it (LocalLines), or null
    private Runnable grantHandled;
    // a "you are next" message asked for an attempt by checkBy (System.nanoTime())
    private boolean hasCheckBy;
    private long checkBy;
    // tells a timer that fires late from one that is still wanted
    private long timerGeneration;
    private long backoff;
    // the acquisition listens for wake-ups on its lock's own channel (sharded pub/sub), see notAcquired
    private boolean listening;
    // ended without a hold after the client was marked closed: left in the waiting room for close() to withdraw
    private boolean awaitsCloseWithdraw;
    // waits in the client's line for the lock (LocalLines): nothing of this acquisition is in Redis
    private boolean inLine;
    // something of this acquisition may be in Redis (an attempt, or a release that named it successor): an
    // unsuccessful end withdraws
    private boolean touched;
    // the permits the attempt that took the hold took (permits-acquire.lua's 4th reply), 0 for a lock: written under
    // lock before the outcome is decided, read by whoever got the hold from the outcome, which completes after that
    private long permitsTaken;

    /**
     * @param extraArgs the acquire script's arguments after the wake-up route
     * @param refusal the exception for a negative reply code (the script's reason to refuse),
     *     given the code
     */
    Acquisition(SingleServerEngine engine, String name, LockKeys keys, LockMode mode, String owner,
            long leaseMillis, boolean renewed, String[] extraArgs, LongFunction<RuntimeException> refusal) {
        super(engine.core, engine.timer(), engine.wheel(), name, keys, mode, owner, leaseMillis, renewed);
        this.engine = engine;
        this.scripts = ModeScripts.of(mode);
        this.extraArgs = extraArgs;
        this.refusal = refusal;
        this.calls = engine.calls();
        this.guard = engine.core.settings().replicationGuard();
        // the replication guard would have to WAIT for a grant too; semaphores get no grants
        this.takesGrants = mode != LockMode.PERMITS && guard == null && extraArgs.length == 0;
    }

    @Override
    protected LockEvents.Wait started() {
        return engine.events().waitStarted(mode, name);
    }

    @Override
    protected void begin(long waitNanos) {
        this.queued = forever || waitNanos > 0;
        if (queued) {
            engine.waitingRoom().enter(owner, this);
            // only writers wait in the client's line; readers go to Redis, which lets them in together
            Long tryBy = takesGrants && mode == LockMode.WRITE
                    ? engine.localLines().join(keys, this, TimeUnit.MILLISECONDS.toNanos(leaseMillis)) : null;
            if (tryBy != null) {
                // the holder's release names its successor; at the holder's lease end this waiter tries in Redis
                // itself, in case the holder never comes back (+1 ms: just after the lease has run out in Redis)
                inLine = true;
                long at = tryBy + TimeUnit.MILLISECONDS.toNanos(1);
                schedule(forever || at - deadline < 0 ? at : deadline, true);
                return;
            }
        }
        attempt();
    }

    LockKeys keys() {
        return keys;
    }

    /** How many permits the hold of a semaphore acquisition holds; read only once its outcome gave the hold. */
    int permitsTaken() {
        lock.lock();
        try {
            return (int) permitsTaken;
        } finally {
            lock.unlock();
        }
    }

    // ---- events -------------------------------------------------------------------------------

    /** The lock may be free for this owner now. Pub/sub thread; never blocks. */
    @Override
    public void wake() {
        step(this::tryAgain);
    }

    /**
     * The client's channel was subscribed again: a wake-up or grant for this owner published meanwhile reached nobody,
     * so it tries again, unless it waits in its client's line, which a release of this client tells, never a message
     * (trying in Redis would queue it there, behind and before others, while a thread of its own client holds the
     * lock). Pub/sub thread; never blocks.
     */
    void resubscribed() {
        step(() -> {
            if (!inLine) {
                tryAgain();
            }
        });
    }

    // lock held
    private void tryAgain() {
        if (isDecided()) {
            return;
        }
        if (inFlight != null) {
            woken = true;
        } else {
            attempt();
        }
    }

    /** This owner should try again within {@code nanos}, if nothing wakes it sooner. Pub/sub thread. */
    void checkWithin(long nanos) {
        step(() -> {
            if (isDecided()) {
                return;
            }
            long by = System.nanoTime() + nanos;
            if (!hasCheckBy || by - checkBy < 0) {
                checkBy = by;
                hasCheckBy = true;
            }
            if (inFlight == null && hasTimer() && by - timerAt() < 0) {
                schedule(by, false);
            }
        });
    }

    /**
     * release.lua made this owner the holder in reply to attempt {@code attempt}, with this
     * fencing token. {@code over} runs at the end of the step. Pub/sub or I/O thread; never blocks.
     */
    void granted(long attempt, long token, Runnable over) {
        step(() -> {
            try {
                // a grant for an older attempt may have been undone by a withdraw since
                if (isDecided() || attempt != attemptId) {
                    return;
                }
                if (inFlight != null) {
                    // its reply says whether it took the grant; if not, the next attempt takes it (see handleReply)
                    grantWaiting = true;
                    grantHandled();
                    grantHandled = over;
                    return;
                }
                // every command of this owner sent before it has been answered (replies come in order), so none
                // of them can run again after the grant and undo it
                tookHold(token, attemptSentNanos);
            } finally {
                if (grantHandled != over) {
                    over.run();
                }
            }
        });
    }

    /**
     * Becomes the successor named in the release that {@code release} sends (given this owner, its lease and the
     * hand-over's id: release.lua's ARGV[7..9]), if this acquisition still waits in its line; null if not. The release
     * is sent under this acquisition's lock, so a withdraw of this owner always follows it. Not on an I/O thread.
     */
    LocalLines.Succession succeed(Function<String[], CompletableFuture<Object>> release) {
        LocalLines.Succession[] named = {null};
        step(() -> {
            if (isDecided() || !inLine) {
                return;
            }
            inLine = false;
            touched = true;
            // the hand-over's id is an attempt's: a grant for it is taken as an attempt's would be
            attemptId = engine.nextAttemptId();
            grantWaiting = false;
            // the grant's lease runs in Redis from when the release ran, after this
            attemptSentNanos = System.nanoTime();
            CompletableFuture<Object> sent;
            try {
                sent = release.apply(new String[] {owner, Long.toString(leaseMillis), Long.toString(attemptId)});
            } catch (RuntimeException e) {
                sent = CompletableFuture.failedFuture(e);
            }
            named[0] = new LocalLines.Succession(this, attemptId, sent);
        });
        return named[0];
    }

    /**
     * The reply of the release that named this acquisition its successor ({@link #succeed}), for hand-over
     * {@code attempt}: it made this owner the holder with fencing token {@code token}, or did not ({@code token} < 0):
     * then this acquisition tries in Redis now, or, when {@code waitForRedis} (the release may have made it the
     * holder, and Redis did not answer), when it is woken or its timer fires. {@code over} runs at the end of the step,
     * once a hold taken here is in the client's table. Any thread; never blocks.
     */
    void succession(long attempt, long token, boolean waitForRedis, Runnable over) {
        step(() -> {
            try {
                if (isDecided() && token >= 0 && touched) {
                    // it gave up: its withdraw followed the release's first send, but maybe not a second one (after
                    // NOSCRIPT or TRYAGAIN) that granted after it
                    engine.releases().undoGrant(keys, owner, token);
                    return;
                }
                // another id: it has tried in Redis since, and that attempt takes a grant it crosses
                if (isDecided() || attempt != attemptId || inFlight != null) {
                    return;
                }
                if (token >= 0) {
                    tookHold(token, attemptSentNanos);
                } else if (!waitForRedis) {
                    attempt();
                }
            } finally {
                over.run();
            }
        });
    }

    /**
     * The release that named this acquisition its successor ({@link #succeed}), for hand-over {@code attempt}, made
     * another thread of this client the holder, one that waited in Redis: this one goes back to the head of the line
     * that thread now leads, or, if nobody here leads it any more, tries in Redis. Any thread; never blocks.
     */
    void passedOver(long attempt) {
        step(() -> {
            if (isDecided() || attempt != attemptId || inFlight != null) {
                return;
            }
            if (engine.localLines().rejoin(keys, this)) {
                inLine = true;
            } else {
                attempt();
            }
        });
    }

    /** Withdraws from the queue (undoing an attempt in flight) and completes the outcome with null. */
    @Override
    protected void giveUp() {
        boolean attempting = abandonAttempt();
        if (queued || attempting) {
            withdraw(attempting);
        }
        finish(null, null);
    }

    @Override
    protected void handlingFailed(RuntimeException error) {
        abandonAttempt();
        // the reply being handled may have taken the lock: undo a fresh hold too
        withdraw(true);
        finish(null, error);
    }

    @Override
    protected void releaseUnseen(Hold hold) {
        engine.releases().releaseUnseen(hold);
    }

    /**
     * The client is closing: withdraws (before the connection closes) and fails the outcome with
     * {@code closed}.
     *
     * @return the reply of the withdraw, if one was sent
     */
    CompletableFuture<?> failAtClose(IllegalStateException closed) {
        List<CompletableFuture<?>> withdrawn = new ArrayList<>(1);
        step(() -> {
            boolean attempting = abandonAttempt();
            if (!isDecided()) {
                finish(null, closed);
            }
            // also an acquisition that an event ended without a hold after the client was marked closed (withdraw()
            // left its withdraw to this); not one that took its hold meanwhile
            if (awaitsCloseWithdraw) {
                awaitsCloseWithdraw = false;
                withdrawn.add(sendWithdraw(attempting));
            }
        });
        return withdrawn.isEmpty() ? CompletableFuture.completedFuture(null) : withdrawn.get(0);
    }

    private void onTimer(long generation) {
        step(() -> {
            if (isDecided() || inFlight != null || generation != timerGeneration) {
                return;
            }
            timerFired();
            // a waiter in the line too: the holder's lease may be over, or the lock free at its deadline (its holder
            // lost it, say, to a forced unlock), so it tries in Redis once, as every waiter does at its deadline
            attempt();
        });
    }

    private void onReply(CompletableFuture<List<Long>> reply, long sentNanos, List<Long> result, Throwable error) {
        step(() -> {
            if (inFlight != reply || isDecided()) {
                // cancelled or failed at close meanwhile; the withdraw sent then undoes it
                return;
            }
            inFlight = null;
            CompletableFuture<Void> refreshed = error != null && redirects < MAX_REDIRECTS
                    ? engine.routes().refreshIfMoved(error) : null;
            if (refreshed != null) {
                // not run: try again on the slot's master once the topology is fresh
                redirects++;
                attemptWhenDone(refreshed);
                return;
            }
            redirects = 0;
            boolean grant = grantWaiting;
            grantWaiting = false;
            try {
                handleReply(result, error, grant, sentNanos);
            } finally {
                grantHandled();
            }
        });
    }

    /** The attempt's reply, or its failure; {@code grant}: a grant for it arrived meanwhile. Lock held. */
    private void handleReply(List<Long> result, Throwable error, boolean grant, long sentNanos) {
        if (error == null && result.get(0) == 1 && result.size() > 3) {
            // a semaphore's attempt took permits (permits-acquire.lua): how many
            permitsTaken = result.get(3);
        }
        if (error != null) {
            // the withdraw that follows a lost reply undoes a grant too; any other failure
            // leaves a grant that is known to exist in Redis
            failed(error, grant);
        } else if (result.get(0) < 0) {
            if (grant || queued) {
                // refused for good (an upgrade, or more permits than a semaphore has now): an entry of an
                // earlier attempt must not stay at the head of the queue, nor a grant unused
                withdraw(false);
            }
            finish(null, refusal.apply(result.get(0)));
        } else if (result.get(0) == 0 && grant) {
            // the attempt ran before the grant, or ran again after it (sent again after a reconnect, behind commands of
            // this owner that were sent again too and may have undone the grant): not proof that the grant still
            // stands. The next attempt, with nothing of this owner left unanswered before it, takes the grant if Redis
            // still has it (acquire.lua) and queues if not
            attempt();
        } else if (result.get(0) == 1 && guard != null) {
            awaitReplicas(result.get(1), sentNanos);
        } else if (result.get(0) == 1) {
            tookHold(result.get(1), sentNanos);
        } else {
            notAcquired(result.get(1), sentNanos);
        }
    }

    /** Runs what waits for a grant that arrived during an attempt to be handled, if anything does. Lock held. */
    private void grantHandled() {
        Runnable over = grantHandled;
        if (over != null) {
            grantHandled = null;
            over.run();
        }
    }

    private void onAcknowledged(CompletableFuture<Long> acks, long token, long sentNanos, Long acknowledged,
            Throwable error) {
        step(() -> {
            if (inFlight != acks || isDecided()) {
                // cancelled or failed at close meanwhile; the withdraw sent then undid the hold
                return;
            }
            inFlight = null;
            if (error != null) {
                // the hold exists in Redis, however the WAIT failed
                failed(error, true);
            } else if (acknowledged >= guard.replicas()) {
                tookHold(token, sentNanos);
            } else {
                tooFewReplicas(acknowledged);
            }
        });
    }

    /** The connection for the next attempt is open, or the topology fresh after a MOVED (or not: {@code error}). */
    private void onReady(CompletableFuture<?> waited, Throwable error) {
        step(() -> {
            if (inFlight != waited || isDecided()) {
                return;
            }
            inFlight = null;
            if (error != null) {
                failed(error, false);
            } else {
                attempt();
            }
        });
    }

    // ---- steps, with lock held ----------------------------------------------------------------

    private void attempt() {
        if (!readyToAttempt()) {
            return;
        }
        woken = false;
        hasCheckBy = false;
        long waitMillis = !queued ? 0
                : forever ? ModeScripts.WAIT_FOREVER_MILLIS : Math.max(1, ceilMillis(deadline - System.nanoTime()));
        CompletableFuture<RedisCalls> route = engine.routes().acquisitionCalls(engine.routes().slotOf(keys.lock()));
        if (!route.isDone() || route.isCompletedExceptionally()) {
            // the guard's connection to the slot's master is being opened (or could not be)
            attemptWhenDone(route);
            return;
        }
        calls = route.join();
        if (inLine) {
            engine.localLines().leave(keys, this);
            inLine = false;
        }
        touched = true;
        attemptId = engine.nextAttemptId();
        // a queued writer's or reader's attempt offers to take a grant on release, for this attempt's id
        String lease = engine.leaseText(leaseMillis);
        String wakeRoute = engine.routes().wakeRoute(keys);
        String[] args = takesGrants && queued
                ? scripts.acquireArgs(owner, lease, 0, waitMillis, engine.graceMillis(), wakeRoute,
                        Long.toString(attemptId))
                : scripts.acquireArgs(owner, lease, 0, waitMillis, engine.graceMillis(), wakeRoute, extraArgs);
        grantWaiting = false;
        grantHandled();
        long sent = System.nanoTime();
        attemptSentNanos = sent;
        CompletableFuture<List<Long>> reply = send(args);
        inFlight = reply;
        // may run at once, in this thread, if the command was refused before it was sent
        reply.whenComplete((result, error) -> onReply(reply, sent, result, error));
    }

    /** Makes waiting for {@code ready} what is in flight; the attempt follows when it is done. */
    private void attemptWhenDone(CompletableFuture<?> ready) {
        // a copy of its own, which abandonAttempt() may cancel without touching the shared one
        CompletableFuture<Object> waited = ready.thenApply(done -> done);
        inFlight = waited;
        // may run at once, in this thread, if ready is done
        waited.whenComplete((done, error) -> onReady(waited, error));
    }

    private void notAcquired(long retryMillis, long sentNanos) {
        backoff = 0;
        long now = System.nanoTime();
        if (!queued) {
            finish(null, null);
            return;
        }
        if (!forever && now - deadline >= 0) {
            withdraw(false);
            finish(null, null);
            return;
        }
        if (!listening) {
            // only now, on the contended path: the uncontended acquisition stays one script call.
            // A release published before the lock's channel was subscribed reached nobody, so the
            // channel tells when to try again (at once, or when the subscription is confirmed)
            listening = true;
            if (engine.routes().listenForWakeUps(this, sentNanos)) {
                woken = true;
            }
        }
        if (woken) {
            attempt();
        } else {
            // +1 ms: try just after the holder's lease has run out in Redis
            long retryAt = now + TimeUnit.MILLISECONDS.toNanos(retryMillis + 1);
            schedule(forever || retryAt - deadline < 0 ? retryAt : deadline, true);
        }
    }

    /**
     * The attempt took the lock: before the hold is handed out, {@code WAIT} for the guard's
     * replicas on the attempt's connection, which counts the attempt's write.
     */
    private void awaitReplicas(long token, long sentNanos) {
        CompletableFuture<Long> acks;
        try {
            acks = calls.awaitReplicas(guard);
        } catch (RuntimeException e) {
            acks = CompletableFuture.failedFuture(e);
        }
        CompletableFuture<Long> reply = acks;
        inFlight = reply;
        reply.whenComplete((acknowledged, error) -> onAcknowledged(reply, token, sentNanos, acknowledged, error));
    }

    /** Undoes a hold too few replicas acknowledged; then fails, gives up or tries again as the guard says. */
    private void tooFewReplicas(long acknowledged) {
        log.debug("{} '{}': only {} of {} replicas acknowledged the acquisition by {}; undoing it",
                mode.description, name, acknowledged, guard.replicas(), owner);
        // also leaves the queue; a next attempt joins it again
        withdraw(true);
        if (guard.onShortfall() == ReplicationGuard.OnShortfall.FAIL) {
            finish(null, new ReplicationShortfallException(name, acknowledged, guard.replicas(), calls.address()));
        } else if (!queued || (!forever && System.nanoTime() - deadline >= 0)) {
            finish(null, null);
        } else {
            // the WAIT took the guard's timeout already: no pause before the next attempt
            attempt();
        }
    }

    private CompletableFuture<List<Long>> send(String[] args) {
        try {
            return calls.runTimed(scripts.acquire, ScriptOutputType.MULTI, keys.all(), args);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** @param holdTaken whether the lock is known to be taken in Redis (the guard's WAIT failed, or a grant arrived) */
    private void failed(Throwable error, boolean holdTaken) {
        engine.routes().refreshIfUnreachable(error);
        RelockException failed = calls.failure(error, "acquire", name);
        if (!(failed instanceof RedisUnavailableException) && (holdTaken || queued)) {
            // a queued owner leaves the queue, which also undoes a grant on release to an earlier attempt of its: an
            // error reply (OOM, BUSY...) ran nothing, but the offer of its previous attempt stands. Where the server
            // refuses the withdraw too, such a grant lasts its lease
            withdraw(holdTaken);
        }
        if (failed instanceof RedisUnavailableException) {
            // the attempt may still be applied; undo it in order on the same connection
            withdraw(true);
            // a wait tries again until its deadline (a single try does not): the next try at the deadline at the
            // latest, so whichever attempt comes last decides, and a failure then is the one thrown
            boolean waitsOn = forever || (queued && System.nanoTime() - deadline < 0);
            if (waitsOn && !engine.core.isClosed()) {
                backoff = RetryBackoff.after(backoff);
                log.debug("{} '{}': Redis unavailable, trying again in {} ms: {}",
                        mode.description, name, TimeUnit.NANOSECONDS.toMillis(backoff), failed.getMessage());
                long at = System.nanoTime() + backoff;
                schedule(forever || at - deadline < 0 ? at : deadline, true);
                return;
            }
        }
        finish(null, failed);
    }

    private void tookHold(long token, long sentNanos) {
        Hold hold = new Hold(name, keys, mode, owner, token, leaseMillis, renewed, sentNanos);
        engine.track(hold);
        if (engine.core.isClosed()) {
            // close() may have released the table before this hold joined it
            engine.releases().releaseUnseen(hold);
            finish(null, engine.core.closedException());
            return;
        }
        if (log.isDebugEnabled()) { // spares the varargs array and the boxing when off
            log.debug("{} '{}' acquired by {} with fencing token {}", mode.description, name, owner, token);
        }
        finish(hold, null);
        // after finish, which gave the hold its thread name
        engine.ownRecord().nameHolder(hold);
    }

    /**
     * Plans the next attempt at {@code at} (System.nanoTime()), or earlier if a check is due; {@code mayBeLate}: a
     * retry at a holder's lease end or a back-off, which may fire a little late (see {@link #armTimer}).
     */
    private void schedule(long at, boolean mayBeLate) {
        boolean checkDue = hasCheckBy && checkBy - at < 0;
        long when = checkDue ? checkBy : at;
        long generation = ++timerGeneration;
        if (!armTimer(() -> onTimer(generation), when, mayBeLate && !checkDue)) {
            // the timer executor shuts down only with the client
            withdraw(false);
            finish(null, engine.core.closedException());
        }
    }

    /** Leaves the queue (and undoes a fresh hold whose reply was lost), without waiting for the reply. */
    private void withdraw(boolean undoFreshHold) {
        if (!touched) {
            // it waited in its line only: Redis has nothing of it
            return;
        }
        if (queued && engine.core.isClosed()) {
            // close() withdraws the queued acquisitions itself, before it closes the connection (see finish)
            return;
        }
        sendWithdraw(undoFreshHold).whenComplete((undone, error) -> {
            if (error != null) {
                log.debug("{} '{}': withdrawing {} failed; its queue entry expires by itself: {}",
                        mode.description, name, owner, error.toString());
            }
        });
    }

    /** Gives up on the reply of the attempt in flight; returns whether there was one. */
    private boolean abandonAttempt() {
        if (inFlight == null) {
            return false;
        }
        CompletableFuture<?> abandoned = inFlight;
        // first: the cancellation completes the reply, whose handling (in this thread) must find it abandoned
        inFlight = null;
        // no NOSCRIPT fallback of the attempt may follow the withdraw that undoes it
        calls.abandon(abandoned);
        return true;
    }

    private CompletableFuture<Long> sendWithdraw(boolean undoFreshHold) {
        // the withdraw undoes a grant on release of any attempt sent before it, so no such grant may be
        // taken any more, even if its message arrives later (while this acquisition backs off): 0 is no
        // attempt's id
        attemptId = 0;
        grantWaiting = false;
        grantHandled();
        return engine.routes().cleanUpOn(calls, scripts.withdraw, keys.all(),
                scripts.withdrawArgs(owner, undoFreshHold, engine.graceMillis(), engine.routes().wakeRoute(keys),
                        engine.lastAttemptId()));
    }

    @Override
    protected void finish(Hold hold, RuntimeException error) {
        decide(hold, error);
        cancelTimer();
        grantHandled();
        if (inLine) {
            engine.localLines().leave(keys, this);
            inLine = false;
        }
        if (queued && hold == null && engine.core.isClosed()) {
            // close() walks the room and withdraws what it finds there (failAtClose); withdraw() leaves that to it
            // once the client is marked closed, so an acquisition that ended without a hold since stays for it
            awaitsCloseWithdraw = true;
        } else if (queued) {
            engine.waitingRoom().leave(owner, this);
        }
        if (listening) {
            engine.routes().stopListeningForWakeUps(this);
        }
    }

    @Override
    protected boolean awaitsEvent() {
        return inFlight != null || hasTimer();
    }

    @Override
    protected void recover(long at) {
        if (!forever && System.nanoTime() - deadline >= 0) {
            // the wait is over: it ends as a wait that ran out does
            if (queued) {
                withdraw(false);
            }
            finish(null, null);
            return;
        }
        schedule(forever || at - deadline < 0 ? at : deadline, false);
    }

    @Override
    protected long settlingNanos() {
        // at the wait's end an attempt may be in flight, then each of up to MAX_REDIRECTS MOVED replies costs a
        // topology refresh and the attempt again, and a guard's WAIT follows the attempt that took the lock
        long nanos = (2L * MAX_REDIRECTS + 2) * engine.core.settings().commandTimeout().toNanos()
                + TimeUnit.SECONDS.toNanos(1);
        return guard == null ? nanos : nanos + guard.timeout().toNanos();
    }

    @Override
    protected String describe() {
        return "queued=" + queued + ", inFlight=" + (inFlight == null ? "none" : inFlight.isDone() ? "done" : "pending")
                + ", woken=" + woken + ", attemptId=" + attemptId + ", grantWaiting=" + grantWaiting
                + ", listening=" + listening + ", redirects=" + redirects + ", backoff=" + backoff + ", inLine=" + inLine
                + ", touched=" + touched;
    }

    private static long ceilMillis(long nanos) {
        return (nanos + 999_999) / 1_000_000;
    }
}
