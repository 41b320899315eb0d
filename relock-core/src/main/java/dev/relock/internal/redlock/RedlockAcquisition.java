package dev.relock.internal.redlock;

import dev.relock.RedisUnavailableException;
import dev.relock.RelockException;
import dev.relock.internal.engine.Hold;
import dev.relock.internal.engine.LockKeys;
import dev.relock.internal.engine.LockMode;
import dev.relock.internal.engine.SteppedAcquisition;
import dev.relock.internal.engine.LockEvents;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One fresh Redlock acquisition by one owner (a thread, or a handle), as a state machine that no
 * thread waits in. The blocking API waits for its outcome in the caller's thread ({@link #run});
 * the asynchronous API hands out a future of it ({@link #startAsync}).
 *
 * <p>One attempt sends the mode's acquire script to every node at once; its poll is decided
 * (a majority said yes, a majority can no longer say yes, or every node answered) or the command
 * timeout passes, on a Lettuce thread. Won: the hold's fencing token is the maximum of the
 * majority's; when fewer than a majority handed out that very token (every attempt proposes the
 * same one to all nodes, which they give unless their fence is past it), it is first written back
 * to a majority. The hold is valid until {@code sent + lease - drift}; if that has passed already,
 * the attempt counts as lost. Lost or undecided: the attempt is cleaned up on
 * every node (see {@link CleanUps#afterAttempt}), and the next attempt goes out
 * <ul>
 *   <li>when a release gave this writer the turn (release.lua names it; a waiting writer has a
 *       place in every node's queue, ordered by when its wait began by that node's clock, see
 *       {@link WriterWait}): at once;</li>
 *   <li>when one owner (or the readers, or a writer whose turn it is) holds a majority: on a
 *       release announcement or once enough of its leases ran out for a majority to be free;
 *       after a release, at once if it named this writer, after the turn if it named another, or
 *       after a random jitter if it named nobody;</li>
 *   <li>when nobody holds a majority (competitors split the nodes): after a random back-off;</li>
 *   <li>when fewer than a majority answered: after a growing back-off; a wait that ends so (and a
 *       single try) fails with {@link RedisUnavailableException}, at most a command timeout
 *       after its end.</li>
 * </ul>
 * {@link WaitPlan} says how long each of these waits lasts, on the client's ticker. A waiting writer may
 * also win without an attempt of its own, by grants on release from a majority ({@link GrantTally} says
 * which count). It never polls at a fixed rate and never blocks a thread between nodes.
 *
 * <p>Design notes. Events come from poll decisions and timers (Lettuce threads), release
 * announcements (pub/sub threads), {@link #cancel} (any thread) and the client's close
 * ({@link #failAtClose}). Every field marked so is guarded by {@code lock}; it is held for
 * book-keeping and while commands are handed to Lettuce, never while waiting. A wake-up belongs
 * to one wait ({@code generation}); a stale one does nothing. Cancelling while an attempt or its
 * token write-back is in flight sends the clean-up by EVAL on every connection, so on each node it
 * runs after the attempt it undoes. The outcome completes once, outside the lock.
 */
final class RedlockAcquisition extends SteppedAcquisition {

    private static final Logger log = LoggerFactory.getLogger(RedlockAcquisition.class);

    // what this client's acquisitions share
    private final Acquisitions shared;
    private final NodeSet nodes;
    private final ReleaseSignals signals;
    private final String member;
    // guarded by lock, as every field below
    private final WaitPlan plan;
    // the grants on release to the latest attempt; only a writer that waits is offered any
    private final GrantTally grants;

    private boolean once;
    // what the attempts tell the nodes of the wait; set by the first step
    private WriterWait wait;
    // the failure of the last attempt when fewer than a majority answered, else null
    private RedisUnavailableException unavailable;
    // an attempt or its token write-back is out and its outcome not handled
    private boolean inFlight;
    // the latest attempt sent, which a clean-up names and follows; null until the first
    private Attempt latest;
    // the release announcement expected for the current attempt and the wait after it; completes
    // with the owner id of the waiting writer whose turn it is, or ""
    private CompletableFuture<String> signal;
    // the wait is a split's back-off, which only this writer's turn cuts short
    private boolean splitting;
    private long generation;
    // the acquisition was won by grants on release
    private boolean wonByGrants;

    RedlockAcquisition(Acquisitions shared, String name, LockKeys keys, LockMode mode, String owner,
            long leaseMillis, boolean renewed) {
        super(shared.core(), shared.nodes().timer(), shared.nodes().wheel(), name, keys, mode, owner, leaseMillis,
                renewed);
        this.shared = shared;
        this.nodes = shared.nodes();
        this.signals = shared.signals();
        this.member = RedlockEngine.member(mode, owner);
        this.plan = WaitPlan.of(core.ticker());
        this.grants = new GrantTally(nodes.size(), core.ticker());
    }

    @Override
    protected LockEvents.Wait started() {
        shared.started(this);
        return shared.events().waitStarted(mode, name);
    }

    @Override
    protected void begin(long waitNanos) {
        this.once = !forever && waitNanos <= 0;
        this.wait = new WriterWait(core.ticker(), mode == LockMode.WRITE, once, forever, deadline,
                core.defaultLeaseMillis());
        if (wait.marks()) {
            // grants come only to a writer that watches its turns
            signals.watchTurns(keys.lock(), owner, this::onGranted);
        }
        attempt();
    }

    @Override
    protected void releaseUnseen(Hold hold) {
        shared.releaseUnseen(hold);
    }

    @Override
    protected void handlingFailed(RuntimeException error) {
        if (latest != null && !inFlight) {
            // the latest attempt may have taken the lock on some nodes (finish undoes one in flight)
            undoAttempt(wait.marks(), false);
        }
        finish(null, error);
    }

    @Override
    protected void ended() {
        shared.ended(this);
    }

    // ---- events -------------------------------------------------------------------------------

    /** Gives up: cleans up an attempt in flight on every node and completes the outcome with null. */
    @Override
    protected void giveUp() {
        finish(null, null);
    }

    /** The client is closing: cleans up an attempt in flight and fails the outcome. */
    void failAtClose(IllegalStateException closed) {
        step(() -> {
            if (!isDecided()) {
                finish(null, closed);
            }
        });
    }

    private void onTimer(long wakeGeneration) {
        step(() -> {
            if (TRACING) {
                trace("timer gen " + wakeGeneration + "/" + generation + (inFlight ? " inFlight" : ""));
            }
            if (!isDecided() && !inFlight && wakeGeneration == generation) {
                attempt();
            }
        });
    }

    /**
     * A release was announced; {@code turn}: the waiting writer whose turn it is, or "", or a grant:
     * '{@code <owner id> <token> <attempt id>}'.
     */
    private void onAnnounced(long wakeGeneration, String turn) {
        step(() -> {
            if (TRACING) {
                trace("announced gen " + wakeGeneration + "/" + generation + " turn '" + turn + "'"
                        + (inFlight ? " inFlight" : ""));
            }
            if (isDecided() || inFlight || wakeGeneration != generation) {
                return;
            }
            boolean grantToThis = ReleaseSignals.grantsTo(turn, owner);
            if (grantToThis && !turn.endsWith(" " + latest.id())) {
                // a grant to an earlier attempt, which a later one found its own: keep waiting as before
                listenAgain(wakeGeneration);
            } else if (grantToThis || turn.equals(owner)
                    || signals.namedSince(keys.lock(), owner, latest.sent())) {
                // the nodes keep the lock for this owner (a node's message for an older release may
                // come after the one that named it): no competitor to spread from
                takeTurnOrGrants();
            } else if (splitting || (!turn.isEmpty() && hasTimer()
                    && plan.endsWithinTurn(timerAt(), shared.turnNanos()))) {
                // a split's back-off, or a wait that ends with the turn anyway: keep its timer and
                // listen for the next release
                listenAgain(wakeGeneration);
            } else if (!turn.isEmpty()) {
                // another writer's turn: wait for the release after its hold, or try once its turn is over
                forgetSignal();
                signal = signals.expect(keys.lock());
                waitUntil(plan.afterTurn(shared.turnNanos()), true, false);
            } else {
                // nobody's turn: everybody waiting heard the same release, so spread the next attempts
                waitUntil(plan.afterJitter(), false, false);
            }
        });
    }

    /** Keeps the wait as it is, and hears the next release announcement in place of the one that came. */
    private void listenAgain(long wakeGeneration) {
        forgetSignal();
        signal = signals.expect(keys.lock());
        signal.thenAccept(next -> onAnnounced(wakeGeneration, next));
    }

    private void onVoted(Poll<List<Object>> poll) {
        step(() -> {
            if (TRACING) {
                trace("voted yes " + poll.yes() + " no " + poll.no() + " failed " + poll.failed());
            }
            if (isDecided()) {
                // cancelled meanwhile; its clean-up follows the attempt on every node
                return;
            }
            if (!poll.won()) {
                inFlight = false;
                lost(poll);
                return;
            }
            List<List<Object>> answers = poll.answers();
            long token = AttemptAnswers.largestToken(answers);
            settleToken(token, AttemptAnswers.giving(answers, token), validUntil());
        });
    }

    /**
     * Node {@code node} granted this writer the lock on release ({@link ReleaseSignals}), for attempt {@code id}.
     * Counted for the latest attempt only, and only while nothing undid it; a majority of them is a won attempt,
     * taken once no attempt or write-back is in flight (one in flight decides by itself).
     */
    private void onGranted(int node, long token, String id) {
        step(() -> {
            if (TRACING) {
                trace("granted by node " + node + " for attempt " + id + (inFlight ? " inFlight" : ""));
            }
            if (isDecided()) {
                return;
            }
            GrantTally.Offer offer = grants.offer(node, token, id);
            if (offer == GrantTally.Offer.AFTER_REPLY) {
                // the attempt's answer from that node comes after the message: counted once it is in
                latest.replies().get(node).whenComplete((answer, error) -> onGranted(node, token, id));
            } else if (offer == GrantTally.Offer.COUNTED && !inFlight && grants.count() >= nodes.majority()) {
                settleGrants();
            }
        });
    }

    /** A majority of the nodes granted the latest attempt on release: won, as if that attempt had been answered so. */
    private void settleGrants() {
        // each node's lease runs from when that attempt ran there (release.lua): after it was sent
        wonByGrants = true;
        settleToken(grants.largestToken(), grants.agreeing(), validUntil());
    }

    /** The end of the validity of a hold the latest attempt took (see {@link Attempt#validUntil}). */
    private long validUntil() {
        return latest.validUntil(shared.drift(), leaseMillis);
    }

    /**
     * A majority holds the lock for this owner with {@code token} the largest of their tokens, {@code agreeing} of
     * them with that very token: settled at once, or after writing it back.
     */
    private void settleToken(long token, int agreeing, long validUntil) {
        if (agreeing >= nodes.majority()) {
            // a majority handed out this very token, and each of them keeps its fence at least
            // that high: every later majority contains one of them, so no write-back is needed
            settleWon(true, null, token, validUntil);
            return;
        }
        inFlight = true;
        Poll<Long> fenced = shared.attemptCalls().writeBack(keys, member, token, latest.id());
        fenced.decidedWithin(nodes.timeoutNanos(), nodes.timer(), nodes.wheel())
                .thenRun(() -> onFenced(fenced, token, validUntil));
    }

    /**
     * This writer was named by a release: with grants for its latest attempt and no turn without one, takes them
     * once a majority came, and otherwise waits for the rest a little ({@link GrantTally#othersAwaitedUntil}),
     * then tries; otherwise tries now.
     */
    private void takeTurnOrGrants() {
        if (grants.count() == 0 || grants.isVoid() || signals.namedSince(keys.lock(), owner, latest.sent())) {
            // a node that gave the turn instead of a grant keeps the lock for this owner too: an attempt takes
            // both at once
            attempt();
        } else if (grants.count() >= nodes.majority()) {
            settleGrants();
        } else {
            waitUntil(grants.othersAwaitedUntil(shared.turnNanos()), false, false);
        }
    }

    private void onFenced(Poll<Long> fenced, long token, long validUntil) {
        step(() -> {
            if (!isDecided()) {
                settleWon(fenced.won(), fenced, token, validUntil);
            }
        });
    }

    /**
     * A majority granted the latest attempt; {@code known}: a majority knows {@code token} (it
     * handed it out, or took the write-back {@code fenced}). Takes the hold while it is valid.
     */
    private void settleWon(boolean known, Poll<Long> fenced, long token, long validUntil) {
        inFlight = false;
        if (known && plan.now() - validUntil < 0) {
            tookHold(token, validUntil);
            return;
        }
        undoAttempt(false, false);
        // the grants it counted stay with the nodes that made them, which the next attempt finds its own
        grants.makeVoid();
        if (!known) {
            unavailable(nodes.unavailable("acquire (fencing token write-back)", name, fenced));
            return;
        }
        log.debug("{} '{}': a majority granted it only after its validity ended; trying again",
                mode.description, name);
        if (once) {
            finish(null, null);
        } else {
            split();
        }
    }

    // ---- steps, with lock held ----------------------------------------------------------------

    private void attempt() {
        if (!readyToAttempt()) {
            return;
        }
        splitting = false;
        generation++;
        forgetSignal();
        // taken before the attempt: a release during the attempt still wakes this acquisition
        signal = signals.expect(keys.lock());
        long sent = plan.now();
        String id = shared.nextAttemptId();
        Poll<List<Object>> poll = shared.attemptCalls().acquire(keys, mode, owner, leaseMillis, id, wait);
        latest = new Attempt(id, sent, poll.replies());
        grants.reset(latest);
        wonByGrants = false;
        if (TRACING) {
            trace("attempt " + id + " sent");
        }
        inFlight = true;
        poll.decidedWithin(nodes.timeoutNanos(), nodes.timer(), nodes.wheel()).thenRun(() -> onVoted(poll));
    }

    /** The attempt did not win: clean it up, then end, fail or wait as the answers say. */
    private void lost(Poll<List<Object>> poll) {
        wait.placeFrom(poll.answers());
        if (poll.yes() > 0 || poll.answered() < nodes.size()) {
            // the nodes that granted it, and those whose answer is unknown, may hold it for this owner
            undoAttempt(false, AttemptAnswers.holderOfMajority(poll.answers(), nodes.majority()));
        }
        RelockException refused = AttemptAnswers.refusedForGood(poll, name, nodes.size(), nodes.majority());
        if (refused != null) {
            finish(null, refused);
            return;
        }
        if (AttemptAnswers.unanswered(poll, nodes.size(), nodes.majority())) {
            unavailable(nodes.unavailable("acquire", name, poll));
            return;
        }
        plan.answered();
        unavailable = null;
        if (once) {
            finish(null, null);
        } else if (grants.count() > 0 || signals.namedSince(keys.lock(), owner, latest.sent())) {
            // a release gave this owner the turn, or a grant, while the attempt was under way
            plan.holderFound();
            takeTurnOrGrants();
        } else if (AttemptAnswers.holderOfMajority(poll.answers(), nodes.majority())) {
            plan.holderFound();
            long retry = AttemptAnswers.retryNanos(poll, nodes.majority(), core.defaultLeaseMillis());
            waitUntil(plan.in(retry), true, true);
        } else {
            split();
        }
    }

    private void split() {
        if (TRACING) {
            trace("split");
        }
        // a release still on its way to some nodes also looks like a split: its announcement,
        // when it names this writer, ends the back-off
        waitUntil(plan.afterSplit(), true, false);
        splitting = true;
    }

    private void unavailable(RedisUnavailableException e) {
        if (TRACING) {
            trace("unavailable");
        }
        if (once) {
            finish(null, e);
            return;
        }
        unavailable = e;
        long at = plan.afterUnavailable();
        log.debug("{} '{}': no majority of Redlock nodes answered, trying again in {} ms: {}",
                mode.description, name,
                TimeUnit.NANOSECONDS.toMillis(plan.unavailableBackoffNanos()), e.getMessage());
        // a release seen on any node, or close(), ends the back-off early
        waitUntil(at, true, true);
    }

    /**
     * Plans the next attempt at {@code at} (ticker), or on a release announcement if
     * {@code onSignal}; a wait whose deadline has passed ends (or fails, when the last attempt
     * found no majority) instead. {@code mayBeLate}: a retry at a holder's lease end or a back-off, which may fire a
     * little late (see {@link #armTimer}); never a turn, a grant's wait or a jitter.
     */
    private void waitUntil(long at, boolean onSignal, boolean mayBeLate) {
        if (TRACING) {
            trace("waitUntil in " + (at - plan.now()) / 1_000_000 + " ms, onSignal " + onSignal + ", signal "
                    + (signal == null ? "none" : signal.isDone() ? "done" : "pending"));
        }
        if (!forever && plan.now() - deadline >= 0) {
            finish(null, unavailable);
            return;
        }
        long when = forever || at - deadline < 0 ? at : deadline;
        splitting = false;
        long wakeGeneration = ++generation;
        if (!armTimer(() -> onTimer(wakeGeneration), when, mayBeLate)) {
            // the timer shuts down only with the client
            finish(null, core.closedException());
            return;
        }
        if (onSignal && signal != null) {
            signal.thenAccept(turn -> onAnnounced(wakeGeneration, turn));
        }
    }

    private void tookHold(long token, long validUntil) {
        // the Hold's lease end is the validity: its lease start is recorded as sent - drift
        long start = validUntil - TimeUnit.MILLISECONDS.toNanos(leaseMillis);
        Hold hold = new Hold(name, keys, mode, owner, token, Long.parseLong(latest.id()), leaseMillis, renewed, start);
        shared.track(hold);
        if (core.isClosed()) {
            // close() may have released the table before this hold joined it
            core.holds().remove(hold);
            undoAttempt(false, false);
            finish(null, core.closedException());
            return;
        }
        if (wait.marks() && !wonByGrants) {
            // a node that refused this attempt keeps this writer as waiting there (its mark keeps new readers
            // out, its place and maybe the turn keep other writers out) until the mark ends, up to 1.5 leases:
            // it waits no more. Not after grants: the nodes that have not granted yet are about to (their
            // messages are on the way), or another writer holds them; the release ends the wait on every node
            shared.cleanUps().stopWaitingWhereRefused(keys, member, latest.replies(), hold);
        }
        log.debug("{} '{}' acquired on a Redlock majority by {} with fencing token {}",
                mode.description, name, owner, token);
        finish(hold, null);
        // after finish, which gave the hold its thread name
        shared.nameHolder(hold);
    }

    @Override
    protected void finish(Hold hold, RuntimeException error) {
        if (hold == null && (inFlight || (latest != null && wait.marks()))) {
            // undoes an attempt in flight (after it, in order, on every node) and a waiting
            // writer's marks
            undoAttempt(wait.marks(), false);
        }
        inFlight = false;
        decide(hold, error);
        cancelTimer();
        forgetSignal();
        signals.unwatchTurns(keys.lock(), owner);
    }

    /**
     * Undoes the latest attempt on every node once that node answered it (see {@link CleanUps#afterAttempt});
     * {@code stopWaiting}: the writer's mark, place and turn go too; {@code heldElsewhere}: another owner holds a
     * majority, whose release this writer waits for, so a turn the clean-up gives it back where it had taken the
     * lock is not announced.
     */
    private void undoAttempt(boolean stopWaiting, boolean heldElsewhere) {
        if (stopWaiting) {
            // a writer that stops waiting undoes this attempt's grants too (see CleanUps#afterAttempt)
            grants.makeVoid();
        }
        shared.cleanUps().afterAttempt(keys, member, latest, stopWaiting, wait, heldElsewhere);
    }

    private void forgetSignal() {
        if (signal != null) {
            signals.forget(keys.lock(), signal);
            signal = null;
        }
    }

    @Override
    protected boolean awaitsEvent() {
        return inFlight || hasTimer();
    }

    @Override
    protected void recover(long at) {
        // ends a wait whose deadline has passed, or arms the next attempt at the earlier of the two
        waitUntil(at, false, false);
    }

    @Override
    protected long settlingNanos() {
        // at the wait's end an attempt may be in flight, then its token write-back
        return 2 * nodes.timeoutNanos() + TimeUnit.SECONDS.toNanos(1);
    }

    @Override
    protected String describe() {
        return "once=" + once + ", inFlight=" + inFlight + ", generation=" + generation
                + ", splitting=" + splitting + ", " + plan + ", grants=" + grants + ", signal="
                + (signal == null ? "none" : signal.isDone() ? "done" : "pending") + ", " + wait
                + (latest == null ? ", no attempt" : ", lastAttemptMsAgo="
                        + TimeUnit.NANOSECONDS.toMillis(plan.now() - latest.sent())
                        + ", replies(pending/answered/failed)=" + latest.progress());
    }
}
