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
 * under {@code lock}, are {@link SteppedAcquisition}'s; what it sends is {@link AcquireCommands}', when it
 * tries next {@link WaitPlan}'s, which attempt a grant may be taken for {@link GrantOffer}'s.
 *
 * <p>Design notes. The owner joins the queue in Redis. Its next attempt is driven by whichever
 * comes first: a wake-up message naming it (pub/sub thread, through the {@link WaitingRoom}), a
 * timer at the holder's lease end or its own deadline (see {@link SteppedAcquisition#armTimer}), or,
 * when Redis is unreachable, a back-off timer (cut to the wait's deadline: if Redis is still unreachable
 * then, that failure is the outcome; a single try has no back-off and fails at once). It never polls at a
 * fixed rate. Events also come from the attempt's reply (a Lettuce I/O thread), {@link #cancel} (any
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
 * sent. A grant is taken only for the latest attempt sent and only once its reply is in; an attempt
 * that reaches Redis after the grant takes it as its reply. A grant that arrives while its attempt is
 * in flight is taken by the next attempt, not on the word of that attempt's "not acquired": the reply
 * may come from a run of the attempt sent again after a reconnect, after commands that undid the grant.
 *
 * <p>Ambiguity: an attempt whose reply times out, or that is cancelled while in flight, may
 * still be applied by Redis. It is then followed, in order, by the mode's withdraw script, which
 * undoes a fresh acquisition and leaves the queue (and undoes a grant the acquisition never took);
 * nothing ownerless lingers until its lease runs out.
 */
final class Acquisition extends SteppedAcquisition implements ChannelWaiter {

    private static final Logger log = LoggerFactory.getLogger(Acquisition.class);
    // as Lettuce's cluster connection: a slot that moves more often than this is failing over in a loop
    static final int MAX_REDIRECTS = 5;

    private final SingleServerEngine engine;
    // guarded by lock: when the next attempt is, and when the wait is over, on the client's ticker
    private final WaitPlan plan;
    private final LongFunction<RuntimeException> refusal;
    // guarded by lock: what this acquisition sends, on the connection of its last attempt
    private final AcquireCommands commands;
    // guarded by lock: which attempt a grant on release may be taken for
    private final GrantOffer grants = new GrantOffer();
    // guarded by lock: where the client wakes this acquisition
    private final WakeRegistrations registrations;
    // guarded by lock: what undoes its traces in Redis
    private final CleanUp cleanUp;
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
        this.plan = new WaitPlan(engine.core.ticker());
        this.refusal = refusal;
        this.commands = new AcquireCommands(engine, mode, keys, owner, leaseMillis, extraArgs);
        this.registrations = new WakeRegistrations(engine, keys, owner, this);
        this.cleanUp = new CleanUp(commands, grants, engine.core, mode, name, owner);
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
        plan.begin(forever, deadline);
        this.queued = forever || waitNanos > 0;
        cleanUp.begin(queued);
        if (queued) {
            registrations.enterRoom();
            // only writers wait in the client's line; readers go to Redis, which lets them in together
            Long tryBy = takesGrants && mode == LockMode.WRITE
                    ? registrations.joinLine(TimeUnit.MILLISECONDS.toNanos(leaseMillis)) : null;
            if (tryBy != null) {
                // the holder's release names its successor; at the holder's lease end this waiter tries in Redis
                // itself, in case the holder never comes back (+1 ms: just after the lease has run out in Redis)
                schedule(plan.byDeadline(tryBy + TimeUnit.MILLISECONDS.toNanos(1)), true);
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
            if (!registrations.isInLine()) {
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
            long by = plan.checkWithin(nanos);
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
                if (isDecided() || !grants.isFor(attempt)) {
                    return;
                }
                if (inFlight != null) {
                    // its reply says whether it took the grant; if not, the next attempt takes it (see handleReply)
                    grants.arrivedInFlight(over);
                    return;
                }
                // every command of this owner sent before it has been answered (replies come in order), so none
                // of them can run again after the grant and undo it
                tookHold(token, grants.sentNanos(), false);
            } finally {
                if (!grants.awaits(over)) {
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
            if (isDecided() || !registrations.namedSuccessor()) {
                return;
            }
            cleanUp.touched();
            long handOver = engine.nextAttemptId();
            // the grant's lease runs in Redis from when the release ran, after this
            grants.handOverSent(handOver, plan.now());
            CompletableFuture<Object> sent;
            try {
                sent = release.apply(new String[] {owner, Long.toString(leaseMillis), Long.toString(handOver)});
            } catch (RuntimeException e) {
                sent = CompletableFuture.failedFuture(e);
            }
            named[0] = new LocalLines.Succession(this, handOver, sent);
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
                if (isDecided() && token >= 0 && cleanUp.isTouched()) {
                    // it gave up: its withdraw followed the release's first send, but maybe not a second one (after
                    // NOSCRIPT or TRYAGAIN) that granted after it
                    engine.releases().undoGrant(keys, owner, token);
                    return;
                }
                // another id: it has tried in Redis since, and that attempt takes a grant it crosses
                if (isDecided() || !grants.isFor(attempt) || inFlight != null) {
                    return;
                }
                if (token >= 0) {
                    tookHold(token, grants.sentNanos(), false);
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
            if (isDecided() || !grants.isFor(attempt) || inFlight != null) {
                return;
            }
            if (!registrations.rejoinLine()) {
                attempt();
            }
        });
    }

    /** Withdraws from the queue (undoing an attempt in flight) and completes the outcome with null. */
    @Override
    protected void giveUp() {
        boolean attempting = abandonAttempt();
        if (queued || attempting) {
            cleanUp.withdraw(attempting);
        }
        finish(null, null);
    }

    @Override
    protected void handlingFailed(RuntimeException error) {
        abandonAttempt();
        // the reply being handled may have taken the lock: undo a fresh hold too
        cleanUp.withdraw(true);
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
            // also an acquisition that an event ended without a hold after the client was marked closed (its withdraw
            // was left to this); not one that took its hold meanwhile
            CompletableFuture<Long> sent = cleanUp.atClose(attempting);
            if (sent != null) {
                withdrawn.add(sent);
            }
        });
        return withdrawn.isEmpty() ? CompletableFuture.completedFuture(null) : withdrawn.get(0);
    }

    private void onTimer(long generation) {
        step(() -> {
            if (isDecided() || inFlight != null || !plan.isCurrent(generation)) {
                return;
            }
            timerFired();
            // a waiter in the line too: the holder's lease may be over, or the lock free at its deadline (its holder
            // lost it, say, to a forced unlock), so it tries in Redis once, as every waiter does at its deadline
            attempt();
        });
    }

    /**
     * Handles what {@code answered}, in flight, answered, in a step; not if it is no longer in flight or the outcome
     * is decided: it was abandoned meanwhile (a cancel, a failure at close), and the withdraw sent then undoes what it
     * may have done.
     */
    private void onAnswer(CompletableFuture<?> answered, Runnable handling) {
        step(() -> {
            if (inFlight == answered && !isDecided()) {
                inFlight = null;
                handling.run();
            }
        });
    }

    private void onReply(CompletableFuture<List<Long>> reply, long sentNanos, List<Long> result, Throwable error) {
        onAnswer(reply, () -> {
            CompletableFuture<Void> refreshed = error != null && redirects < MAX_REDIRECTS
                    ? engine.routes().refreshIfMoved(error) : null;
            if (refreshed != null) {
                // not run: try again on the slot's master once the topology is fresh
                redirects++;
                attemptWhenDone(refreshed);
                return;
            }
            redirects = 0;
            boolean grant = grants.takeWaiting();
            try {
                handleReply(result, error, grant, sentNanos);
            } finally {
                grants.handled();
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
                cleanUp.withdraw(false);
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
            tookHold(result.get(1), sentNanos, true);
        } else {
            notAcquired(result.get(1), sentNanos);
        }
    }

    private void onAcknowledged(CompletableFuture<Long> acks, long token, long sentNanos, Long acknowledged,
            Throwable error) {
        onAnswer(acks, () -> {
            if (error != null) {
                // the hold exists in Redis, however the WAIT failed
                failed(error, true);
            } else if (acknowledged >= guard.replicas()) {
                tookHold(token, sentNanos, true);
            } else {
                tooFewReplicas(acknowledged);
            }
        });
    }

    /** The connection for the next attempt is open, or the topology fresh after a MOVED (or not: {@code error}). */
    private void onReady(CompletableFuture<?> waited, Throwable error) {
        onAnswer(waited, () -> {
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
        plan.attempted();
        long waitMillis = plan.scriptWaitMillis(queued);
        CompletableFuture<RedisCalls> route = commands.route();
        if (!route.isDone() || route.isCompletedExceptionally()) {
            // the guard's connection to the slot's master is being opened (or could not be)
            attemptWhenDone(route);
            return;
        }
        registrations.leaveLine();
        cleanUp.touched();
        long id = engine.nextAttemptId();
        long sent = plan.now();
        grants.attemptSent(id, sent);
        // a queued writer's or reader's attempt offers to take a grant on release, for this attempt's id
        long grantFor = takesGrants && queued ? id : 0;
        CompletableFuture<List<Long>> reply = commands.acquire(route.join(), waitMillis, grantFor);
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
        long now = plan.now();
        long retryAt = plan.afterLease(now, retryMillis);
        if (!queued) {
            finish(null, null);
            return;
        }
        if (plan.isOver(now)) {
            cleanUp.withdraw(false);
            finish(null, null);
            return;
        }
        // only now, on the contended path: the uncontended acquisition stays one script call
        if (registrations.listen(sentNanos)) {
            woken = true;
        }
        if (woken) {
            attempt();
        } else {
            schedule(retryAt, true);
        }
    }

    /**
     * The attempt took the lock: before the hold is handed out, {@code WAIT} for the guard's
     * replicas on the attempt's connection, which counts the attempt's write.
     */
    private void awaitReplicas(long token, long sentNanos) {
        CompletableFuture<Long> reply = commands.awaitReplicas(guard);
        inFlight = reply;
        reply.whenComplete((acknowledged, error) -> onAcknowledged(reply, token, sentNanos, acknowledged, error));
    }

    /** Undoes a hold too few replicas acknowledged; then fails, gives up or tries again as the guard says. */
    private void tooFewReplicas(long acknowledged) {
        log.debug("{} '{}': only {} of {} replicas acknowledged the acquisition by {}; undoing it",
                mode.description, name, acknowledged, guard.replicas(), owner);
        // also leaves the queue; a next attempt joins it again
        cleanUp.withdraw(true);
        if (guard.onShortfall() == ReplicationGuard.OnShortfall.FAIL) {
            finish(null, new ReplicationShortfallException(name, acknowledged, guard.replicas(), commands.address()));
        } else if (!queued || plan.isOver()) {
            finish(null, null);
        } else {
            // the WAIT took the guard's timeout already: no pause before the next attempt
            attempt();
        }
    }

    /** @param holdTaken whether the lock is known to be taken in Redis (the guard's WAIT failed, or a grant arrived) */
    private void failed(Throwable error, boolean holdTaken) {
        engine.routes().refreshIfUnreachable(error);
        RelockException failed = commands.failure(error, name);
        if (!(failed instanceof RedisUnavailableException) && (holdTaken || queued)) {
            // a queued owner leaves the queue, which also undoes a grant on release to an earlier attempt of its: an
            // error reply (OOM, BUSY...) ran nothing, but the offer of its previous attempt stands. Where the server
            // refuses the withdraw too, such a grant lasts its lease
            cleanUp.withdraw(holdTaken);
        }
        if (failed instanceof RedisUnavailableException) {
            // the attempt may still be applied; undo it in order on the same connection
            cleanUp.withdraw(true);
            // a wait tries again until its deadline (a single try does not): the next try at the deadline at the
            // latest, so whichever attempt comes last decides, and a failure then is the one thrown
            boolean waitsOn = forever || (queued && !plan.isOver());
            if (waitsOn && !engine.core.isClosed()) {
                long at = plan.afterBackoff();
                log.debug("{} '{}': Redis unavailable, trying again in {} ms: {}", mode.description, name,
                        TimeUnit.NANOSECONDS.toMillis(plan.backoffNanos()), failed.getMessage());
                schedule(at, true);
                return;
            }
        }
        finish(null, failed);
    }

    /** @param answered whether an attempt's own answer made the hold (not a grant on release or a hand-over) */
    private void tookHold(long token, long sentNanos, boolean answered) {
        Hold hold = new Hold(name, keys, mode, owner, token, leaseMillis, renewed, sentNanos);
        long now = plan.now();
        if (!answered && now - SingleServerRenewal.deadline(hold.leaseEndNanos(), leaseMillis) >= 0) {
            grantCameAfterItsLease(hold, now);
            return;
        }
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
     * A grant on release (or a hand-over) whose news came after the grant's lease, counted as the lease keeper counts
     * it (from when the attempt or the release that made it was sent, less the drift): Redis may have let another owner
     * in since, and the caller, handed this hold, would enter beside it without being told. It is not handed out. While
     * the wait goes on, a fresh attempt asks Redis at once: it takes the hold anew if Redis still has it for this owner,
     * its lease counted from then, and queues if not. A wait that is over, or a closed client, gives the hold up: its
     * release names its fencing token, so a later holder is left alone. Redlock does the same with a majority that came
     * after its validity.
     *
     * <p>An attempt's own answer that comes after the lease is handed out, and the lease keeper reports the hold lost
     * at once: the answer comes within the command timeout, so only a lease shorter than the round trip (down to 1 ms,
     * which callers may ask for) or a pause of this client gets there, and a pause is what fencing covers
     * (docs/guarantees.md). Refusing it would leave {@code lock()} with such a lease trying for ever.
     */
    private void grantCameAfterItsLease(Hold hold, long now) {
        log.debug("{} '{}': the grant with fencing token {} came after its lease ended; not handed out",
                mode.description, name, hold.fencingToken);
        boolean closed = engine.core.isClosed();
        if (closed || !queued || plan.isOver(now)) {
            releaseUnseen(hold);
            finish(null, closed ? engine.core.closedException() : null);
        } else {
            attempt();
        }
    }

    /**
     * Plans the next attempt at {@code at} (a reading of the ticker), or earlier if a check is due; {@code mayBeLate}:
     * a retry at a holder's lease end or a back-off, which may fire a little late (see {@link #armTimer}).
     */
    private void schedule(long at, boolean mayBeLate) {
        boolean checkFirst = plan.checkBefore(at);
        long generation = plan.nextGeneration();
        if (!armTimer(() -> onTimer(generation), checkFirst ? plan.checkBy() : at, mayBeLate && !checkFirst)) {
            // the timer executor shuts down only with the client
            cleanUp.withdraw(false);
            finish(null, engine.core.closedException());
        }
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
        commands.abandon(abandoned);
        return true;
    }

    @Override
    protected void finish(Hold hold, RuntimeException error) {
        decide(hold, error);
        cancelTimer();
        grants.handled();
        // close() walks the room and withdraws what it finds there (failAtClose)
        registrations.leave(cleanUp.leftForClose(hold != null));
    }

    @Override
    protected boolean awaitsEvent() {
        return inFlight != null || hasTimer();
    }

    @Override
    protected void recover(long at) {
        if (plan.isOver()) {
            // the wait is over: it ends as a wait that ran out does
            if (queued) {
                cleanUp.withdraw(false);
            }
            finish(null, null);
            return;
        }
        schedule(plan.byDeadline(at), false);
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
                + ", woken=" + woken + ", " + grants
                + ", " + registrations + ", redirects=" + redirects + ", " + plan
                + ", " + cleanUp;
    }
}
