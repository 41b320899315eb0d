package dev.relock.internal.redlock;

import dev.relock.RedisUnavailableException;
import dev.relock.RelockException;
import dev.relock.internal.engine.Hold;
import dev.relock.internal.engine.LockKeys;
import dev.relock.internal.engine.LockMode;
import dev.relock.internal.engine.SteppedAcquisition;
import dev.relock.internal.engine.LockEvents;
import dev.relock.internal.script.RedlockScripts;
import io.lettuce.core.ScriptOutputType;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
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
 * every node (see {@link CleanUps#afterAttempt}), and the next attempt waits
 * <ul>
 *   <li>when a release gave this writer the turn (release.lua names it; a waiting writer has a
 *       place in every node's queue, ordered by when its wait began by that node's clock): not at all;</li>
 *   <li>when one owner (or the readers, or a writer whose turn it is) holds a majority: for a
 *       release announcement or until enough of its leases run out for a majority to be free;
 *       then at once if the release named this writer, after the turn if it named another, or
 *       after a random jitter if it named nobody;</li>
 *   <li>when nobody holds a majority (competitors split the nodes): a random back-off that grows
 *       with repeated splits, so competing clients do not collide forever;</li>
 *   <li>when fewer than a majority answered: a growing back-off; a wait that ends so (and a
 *       single try) fails with {@link RedisUnavailableException}, at most a command timeout
 *       after its end.</li>
 * </ul>
 * A waiting writer's refused attempt leaves a grant offer on each node (acquire.lua): a release that frees a
 * node while the writer heads its queue makes it the holder there for that attempt, and says so with the
 * token ({@link ReleaseSignals.Grants}). Grants for the latest attempt from a majority of the nodes win as
 * that attempt would have, with no attempt of its own: valid from when the attempt was sent, which is before
 * any node's lease for it began, and with the same token rule (a write-back unless a majority gave one token).
 * Only grants from nodes that refused the attempt count: the clean-up of a writer that goes on waiting leaves
 * those nodes alone, and once a clean-up that may undo them was sent (the writer stops waiting, or won too late)
 * none count. Grants that do not reach a majority within {@link #grantWaitNanos} of the first are taken by an
 * attempt instead (it finds the lock its own where it was granted).
 * It never polls at a fixed rate and never blocks a thread between nodes.
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
    private static final long JITTER_NANOS = TimeUnit.MILLISECONDS.toNanos(5);
    private static final long GRANT_WAIT_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    private static final long FIRST_SPLIT_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    private static final long MAX_SPLIT_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(200);
    private static final long FIRST_UNAVAILABLE_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
    private static final long MAX_UNAVAILABLE_BACKOFF_NANOS = TimeUnit.SECONDS.toNanos(2);
    // how far ahead of this client's clock an attempt's proposed token is (acquire.lua's ARGV[6]):
    // ahead of the nodes' clocks too unless they run that much faster, so that nodes whose fences
    // are below it all hand out the proposal
    private static final long TOKEN_LEAD_MICROS = TimeUnit.MILLISECONDS.toMicros(50);

    // what this client's acquisitions share
    private final Acquisitions shared;
    private final NodeSet nodes;
    private final ReleaseSignals signals;
    private final String member;

    // all guarded by lock
    private boolean once;
    private int splits;
    private long unavailableBackoff;
    // the failure of the last attempt when fewer than a majority answered, else null
    private RedisUnavailableException unavailable;
    // an attempt or its token write-back is out and its outcome not handled
    private boolean inFlight;
    // an attempt was sent
    private boolean attempted;
    // the id, send time and replies of the latest attempt sent, which a clean-up names and follows
    private String attemptId;
    private long attemptSent;
    private List<CompletableFuture<List<Object>>> attemptReplies;
    // the release announcement expected for the current attempt and the wait after it; completes
    // with the owner id of the waiting writer whose turn it is, or ""
    private CompletableFuture<String> signal;
    // when the wait began (System.nanoTime()): each attempt tells the nodes how long it has waited, and a node
    // that queues the writer puts it at its own time minus that (see acquire.lua); only for a wait, not one try
    private long waitBegan;
    // a waiting writer's place in every node's queue (acquire.lua's ARGV[7]): the median of the places
    // the nodes gave its first refused attempt, or "" until then
    private String place = "";
    // the wait is a split's back-off, which only this writer's turn cuts short
    private boolean splitting;
    private long generation;
    // the grants on release to the latest attempt, for a writer that waits (else null): only from nodes that
    // refused the attempt (a clean-up that goes on waiting leaves those alone), void once a clean-up that may undo
    // them was sent (attemptUndone), and reset by the next attempt. The others are waited for until grantWaitNanos
    // after the first, then the writer tries instead
    private GrantTally grants;
    private boolean attemptUndone;
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
    }

    @Override
    protected LockEvents.Wait started() {
        shared.started(this);
        return shared.events().waitStarted(mode, name);
    }

    @Override
    protected void begin(long waitNanos) {
        this.once = !forever && waitNanos <= 0;
        if (!once) {
            waitBegan = System.nanoTime();
            if (mode == LockMode.WRITE) {
                // before the watch: grants come only to a writer that watches its turns
                grants = new GrantTally(nodes.size());
                signals.watchTurns(keys.lock(), owner, this::onGranted);
            }
        }
        attempt();
    }

    @Override
    protected void releaseUnseen(Hold hold) {
        shared.releaseUnseen(hold);
    }

    @Override
    protected void handlingFailed(RuntimeException error) {
        if (attempted && !inFlight) {
            // the latest attempt may have taken the lock on some nodes (finish undoes one in flight)
            undoAttempt(markMillisSent());
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
            long jitter = ThreadLocalRandom.current().nextLong(JITTER_NANOS);
            boolean grantToThis = turn.length() > owner.length() && turn.startsWith(owner)
                    && turn.charAt(owner.length()) == ' ';
            if (grantToThis && !turn.endsWith(" " + attemptId)) {
                // a grant to an earlier attempt, which a later one found its own: keep waiting as before
                forgetSignal();
                signal = signals.expect(keys.lock());
                signal.thenAccept(next -> onAnnounced(wakeGeneration, next));
            } else if (grantToThis || turn.equals(owner)
                    || signals.namedSince(keys.lock(), owner, attemptSent)) {
                // the nodes keep the lock for this owner (a node's message for an older release may
                // come after the one that named it): no competitor to spread from
                takeTurnOrGrants();
            } else if (splitting || (!turn.isEmpty() && hasTimer()
                    && timerAt() - System.nanoTime() <= shared.turnNanos() + JITTER_NANOS)) {
                // a split's back-off, or a wait that ends with the turn anyway: keep its timer and
                // listen for the next release
                forgetSignal();
                signal = signals.expect(keys.lock());
                signal.thenAccept(next -> onAnnounced(wakeGeneration, next));
            } else if (!turn.isEmpty()) {
                // another writer's turn: wait for the release after its hold, or try once its turn is over
                forgetSignal();
                signal = signals.expect(keys.lock());
                long at = System.nanoTime() + shared.turnNanos() + jitter;
                waitUntil(forever || at - deadline < 0 ? at : deadline, true, false);
            } else {
                // nobody's turn: everybody waiting heard the same release, so spread the next attempts
                long at = System.nanoTime() + jitter;
                waitUntil(forever || at - deadline < 0 ? at : deadline, false, false);
            }
        });
    }

    private void onVoted(Poll<List<Object>> poll, long sent) {
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
            long token = 0;
            int agreeing = 0;
            for (List<Object> reply : poll.answers()) {
                if ((Long) reply.get(0) == 1L) {
                    long given = (Long) reply.get(1);
                    agreeing = given == token ? agreeing + 1 : given > token ? 1 : agreeing;
                    token = Math.max(token, given);
                }
            }
            settleToken(token, agreeing, sent + shared.drift().validNanos(leaseMillis));
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
            if (isDecided() || attemptUndone || !id.equals(attemptId) || grants.has(node)) {
                return;
            }
            CompletableFuture<List<Object>> reply = attemptReplies.get(node);
            if (!reply.isDone()) {
                // the attempt's answer from that node comes after the message: counted once it is in
                reply.whenComplete((answer, error) -> onGranted(node, token, id));
                return;
            }
            if (!AttemptAnswers.isRefusal(reply)) {
                // failed there (it cannot have said yes and queued for a grant): the clean-up after it undoes it
                return;
            }
            grants.add(node, token);
            if (!inFlight && grants.count() >= nodes.majority()) {
                settleGrants();
            }
        });
    }

    /** A majority of the nodes granted the latest attempt on release: won, as if that attempt had been answered so. */
    private void settleGrants() {
        // each node's lease runs from when that attempt ran there (release.lua): after it was sent
        wonByGrants = true;
        settleToken(grants.largestToken(), grants.agreeing(), attemptSent + shared.drift().validNanos(leaseMillis));
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
        // in order on each node: it changes the token of the hold this attempt took, and of no later one
        Poll<Long> fenced = nodes.sendToAllInOrder(RedlockScripts.FENCE, ScriptOutputType.INTEGER,
                keys.all(), written -> true, member, Long.toString(token), attemptId);
        fenced.decidedWithin(nodes.timeoutNanos(), nodes.timer(), nodes.wheel())
                .thenRun(() -> onFenced(fenced, token, validUntil));
    }

    /**
     * This writer was named by a release: with grants for its latest attempt and no turn without one, takes them
     * once a majority came, and otherwise waits for the rest until {@code grantWaitNanos} after the first, then
     * tries; otherwise tries now.
     */
    private void takeTurnOrGrants() {
        if (grantCount() == 0 || attemptUndone || signals.namedSince(keys.lock(), owner, attemptSent)) {
            // a node that gave the turn instead of a grant keeps the lock for this owner too: an attempt takes
            // both at once
            attempt();
        } else if (grants.count() >= nodes.majority()) {
            settleGrants();
        } else {
            waitUntil(grants.firstAt() + grantWaitNanos(), false, false);
        }
    }

    /** How many nodes granted the latest attempt on release; 0 for an acquisition that gets no grants. */
    private int grantCount() {
        return grants == null ? 0 : grants.count();
    }

    /**
     * How long after the first grant the others are waited for before an attempt takes what was granted: a
     * release goes to every node at once, so its grants come within a few milliseconds of each other, or the
     * nodes passed the lock to different writers (their queues ordered them differently), which only attempts
     * sort out (see {@link #split}). At most a turn.
     */
    private long grantWaitNanos() {
        return Math.min(GRANT_WAIT_NANOS, shared.turnNanos());
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
        if (known && System.nanoTime() - validUntil < 0) {
            tookHold(token, validUntil);
            return;
        }
        undoAttempt(false);
        // the grants it counted stay with the nodes that made them, which the next attempt finds its own
        attemptUndone = true;
        if (!known) {
            unavailable(nodes.unavailable("acquire (fencing token write-back)", name, fenced));
            return;
        }
        log.debug("{} '{}': a majority granted it only after its validity ended; trying again",
                mode == LockMode.READ ? "read lock" : "lock", name);
        if (once) {
            finish(null, null);
        } else {
            split();
        }
    }

    /** How long this wait has lasted, in microseconds of this JVM's monotonic clock; "0" for a single try. */
    private String waitedMicros() {
        return once ? "0" : Long.toString(Math.max(0, (System.nanoTime() - waitBegan) / 1_000));
    }

    /** {@code instant} in microseconds since the epoch. */
    private static long epochMicros(Instant instant) {
        return instant.getEpochSecond() * 1_000_000 + instant.getNano() / 1_000;
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
        long sent = System.nanoTime();
        attemptSent = sent;
        attemptId = shared.nextAttemptId();
        if (grants != null) {
            grants.reset();
        }
        attemptUndone = false;
        wonByGrants = false;
        String lease = Long.toString(leaseMillis);
        String proposal = Long.toString(epochMicros(Instant.now()) + TOKEN_LEAD_MICROS);
        // a reader has no mark, no wait and no place: acquire-read.lua takes none of their arguments
        boolean reader = mode == LockMode.READ;
        Poll<List<Object>> poll = nodes.sendToAllInOrder(reader ? RedlockScripts.ACQUIRE_READ : RedlockScripts.ACQUIRE,
                ScriptOutputType.MULTI,
                keys.all(),
                reply -> (Long) reply.get(0) == 1L,
                reader ? new String[] {owner, lease, attemptId, proposal}
                        : new String[] {owner, lease, Long.toString(markMillis()), waitedMicros(), attemptId, proposal,
                                place});
        attemptReplies = poll.replies();
        if (TRACING) {
            trace("attempt " + attemptId + " sent");
        }
        inFlight = true;
        attempted = true;
        poll.decidedWithin(nodes.timeoutNanos(), nodes.timer(), nodes.wheel()).thenRun(() -> onVoted(poll, sent));
    }

    /** The attempt did not win: clean it up, then end, fail or wait as the answers say. */
    private void lost(Poll<List<Object>> poll) {
        if (place.isEmpty()) {
            place = AttemptAnswers.agreedPlace(poll.answers());
        }
        if (poll.yes() > 0 || poll.answered() < nodes.size()) {
            // the nodes that granted it, and those whose answer is unknown, may hold it for this owner
            undoAttempt(false, AttemptAnswers.holderOfMajority(poll.answers(), nodes.majority()));
        }
        RelockException refused = AttemptAnswers.refusedForGood(poll, name, nodes.size(), nodes.majority());
        if (refused != null) {
            finish(null, refused);
            return;
        }
        // refusals decide the poll before the remaining nodes answer: unavailable only when no
        // node refused, or so many failed that a majority cannot answer at all
        if (poll.answered() < nodes.majority()
                && (poll.no() == 0 || poll.failed() > nodes.size() - nodes.majority())) {
            unavailable(nodes.unavailable("acquire", name, poll));
            return;
        }
        unavailableBackoff = 0;
        unavailable = null;
        if (once) {
            finish(null, null);
        } else if (grantCount() > 0 || signals.namedSince(keys.lock(), owner, attemptSent)) {
            // a release gave this owner the turn, or a grant, while the attempt was under way
            splits = 0;
            takeTurnOrGrants();
        } else if (AttemptAnswers.holderOfMajority(poll.answers(), nodes.majority())) {
            splits = 0;
            long retry = AttemptAnswers.retryNanos(poll, nodes.majority(), shared.core().defaultLeaseMillis());
            waitUntil(System.nanoTime() + retry, true, true);
        } else {
            split();
        }
    }

    private void split() {
        if (TRACING) {
            trace("split");
        }
        long cap = Math.min(MAX_SPLIT_BACKOFF_NANOS, FIRST_SPLIT_BACKOFF_NANOS << Math.min(splits++, 5));
        // a release still on its way to some nodes also looks like a split: its announcement,
        // when it names this writer, ends the back-off
        waitUntil(System.nanoTime() + ThreadLocalRandom.current().nextLong(cap), true, false);
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
        unavailableBackoff = unavailableBackoff == 0 ? FIRST_UNAVAILABLE_BACKOFF_NANOS
                : Math.min(MAX_UNAVAILABLE_BACKOFF_NANOS, unavailableBackoff * 2);
        log.debug("{} '{}': no majority of Redlock nodes answered, trying again in {} ms: {}",
                mode == LockMode.READ ? "read lock" : "lock", name,
                TimeUnit.NANOSECONDS.toMillis(unavailableBackoff), e.getMessage());
        // a release seen on any node, or close(), ends the back-off early
        waitUntil(System.nanoTime() + unavailableBackoff, true, true);
    }

    /**
     * Plans the next attempt at {@code at} (System.nanoTime()), or on a release announcement if
     * {@code onSignal}; a wait whose deadline has passed ends (or fails, when the last attempt
     * found no majority) instead. {@code mayBeLate}: a retry at a holder's lease end or a back-off, which may fire a
     * little late (see {@link #armTimer}); never a turn, a grant's wait or a jitter.
     */
    private void waitUntil(long at, boolean onSignal, boolean mayBeLate) {
        if (TRACING) {
            trace("waitUntil in " + (at - System.nanoTime()) / 1_000_000 + " ms, onSignal " + onSignal + ", signal "
                    + (signal == null ? "none" : signal.isDone() ? "done" : "pending"));
        }
        if (!forever && System.nanoTime() - deadline >= 0) {
            finish(null, unavailable);
            return;
        }
        long when = forever || at - deadline < 0 ? at : deadline;
        splitting = false;
        long wakeGeneration = ++generation;
        if (!armTimer(() -> onTimer(wakeGeneration), when, mayBeLate)) {
            // the timer shuts down only with the client
            finish(null, shared.core().closedException());
            return;
        }
        if (onSignal && signal != null) {
            signal.thenAccept(turn -> onAnnounced(wakeGeneration, turn));
        }
    }

    private void tookHold(long token, long validUntil) {
        // the Hold's lease end is the validity: its lease start is recorded as sent - drift
        long start = validUntil - TimeUnit.MILLISECONDS.toNanos(leaseMillis);
        Hold hold = new Hold(name, keys, mode, owner, token, Long.parseLong(attemptId), leaseMillis, renewed, start);
        shared.track(hold);
        if (shared.core().isClosed()) {
            // close() may have released the table before this hold joined it
            shared.core().holds().remove(hold);
            undoAttempt(false);
            finish(null, shared.core().closedException());
            return;
        }
        if (markMillisSent() && !wonByGrants) {
            // a node that refused this attempt keeps this writer as waiting there (its mark keeps new readers
            // out, its place and maybe the turn keep other writers out) until the mark ends, up to 1.5 leases:
            // it waits no more. Not after grants: the nodes that have not granted yet are about to (their
            // messages are on the way), or another writer holds them; the release ends the wait on every node
            shared.cleanUps().stopWaitingWhereRefused(keys, member, attemptReplies, hold);
        }
        log.debug("{} '{}' acquired on a Redlock majority by {} with fencing token {}",
                mode == LockMode.READ ? "read lock" : "lock", name, owner, token);
        finish(hold, null);
        // after finish, which gave the hold its thread name
        shared.nameHolder(hold);
    }

    /**
     * How long a refused writer keeps new readers out on a node (writer preference): until the
     * end of its wait, at most 1.5 default leases (its next attempt, which renews the mark, comes
     * sooner: a release message, or the readers' leases ending, which are at most one default
     * lease away). A waiting writer that crashed keeps new readers out that long at most.
     */
    private long markMillis() {
        if (mode != LockMode.WRITE || once) {
            return 0;
        }
        long cap = shared.core().defaultLeaseMillis() * 3 / 2;
        long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()) + 1;
        return Math.max(1, forever ? cap : Math.min(cap, left));
    }

    @Override
    protected void finish(Hold hold, RuntimeException error) {
        if (hold == null && (inFlight || (attempted && markMillisSent()))) {
            // undoes an attempt in flight (after it, in order, on every node) and a waiting
            // writer's marks
            undoAttempt(markMillisSent());
        }
        inFlight = false;
        decide(hold, error);
        cancelTimer();
        forgetSignal();
        signals.unwatchTurns(keys.lock(), owner);
    }

    /**
     * Undoes the latest attempt on every node once that node answered it (see
     * {@link CleanUps#afterAttempt}); {@code stopWaiting}: the writer's mark, place and turn
     * go too.
     */
    private void undoAttempt(boolean stopWaiting) {
        undoAttempt(stopWaiting, false);
    }

    /**
     * As {@link #undoAttempt(boolean)}; {@code heldElsewhere}: another owner holds a majority, whose release this
     * writer waits for, so a turn the clean-up gives it back where it had taken the lock is not announced.
     */
    private void undoAttempt(boolean stopWaiting, boolean heldElsewhere) {
        // a writer that stops waiting undoes this attempt's grants too (see CleanUps#afterAttempt)
        attemptUndone |= stopWaiting;
        boolean waits = !stopWaiting && markMillisSent();
        shared.cleanUps().afterAttempt(keys, member, stopWaiting, attemptId, waits ? waitedMicros() : "0",
                waits ? Long.toString(markMillis()) : "0", waits ? place : "", waits && heldElsewhere, attemptReplies);
    }

    /** Whether this acquisition's attempts mark a waiting writer (see {@link #markMillis}). */
    private boolean markMillisSent() {
        return mode == LockMode.WRITE && !once;
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
        StringBuilder replies = new StringBuilder();
        if (attemptReplies != null) {
            for (CompletableFuture<List<Object>> reply : attemptReplies) {
                replies.append(!reply.isDone() ? 'p' : reply.isCompletedExceptionally() ? 'x' : 'a');
            }
        }
        return "once=" + once + ", inFlight=" + inFlight + ", attempted=" + attempted + ", generation=" + generation
                + ", splitting=" + splitting + ", splits=" + splits + ", grants=" + grantCount()
                + (attemptUndone ? " (undone)" : "") + ", unavailableBackoffMs="
                + TimeUnit.NANOSECONDS.toMillis(unavailableBackoff) + ", signal="
                + (signal == null ? "none" : signal.isDone() ? "done" : "pending") + ", place=" + place
                + ", lastAttemptMsAgo=" + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - attemptSent)
                + ", replies(pending/answered/failed)=" + replies;
    }
}
