package dev.relock.internal.single;

import dev.relock.LeaseLostException;
import dev.relock.RedisUnavailableException;
import dev.relock.RelockException;
import dev.relock.internal.engine.Hold;
import dev.relock.internal.engine.LockKeys;
import dev.relock.internal.engine.LockMode;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One await of a condition of a write lock ({@link RedisCondition}), blocking no thread: the blocking awaits wait for
 * its result in the holder's thread, {@link RedisCondition#awaitAsync} for a handle's hold.
 *
 * <p>Its course: enter {@link ConditionWaits}, join the wait set (only the writer may, so no signal comes before),
 * release the owner's every hold of the lock, then wait for a signal message, a reason to look again ({@code 'stay'},
 * which also keeps its entry alive every lease/3), its deadline or a stop; a deadline or stop leaves the wait set
 * unless a signal came first. Then it acquires the lock again as any waiter does, for the same owner (a signalled owner
 * finds its place in the lock's queue); its result is that hold and how the wait ended.
 *
 * <p>Invariant: from the join on, a signal may pick the owner, so the await ends with the lock taken back (the signal
 * honoured: the result holds it), or failed with its entry taken out of the wait set unsignalled ('leave' answered 1),
 * or stopped by a cancel with its entry taken out unsignalled; never otherwise. A join or release whose outcome is
 * unknown (no reply in time) is sent again until Redis answers (both leave what one run leaves): it never acts on a
 * state of Redis it does not know. A cancel that comes after a signal took the owner does not withdraw the
 * re-acquisition: the result's taker passes the signal on ({@link RedisCondition#passOn}).
 *
 * <p>State: {@link #signalled} and {@link #recheck} are set by the pub/sub thread and read under the lock; the rest is
 * guarded by the lock. At most one command of the await is in flight at a time.
 */
final class ConditionAwait extends SerialWait<ConditionAwait.Resumed> implements ConditionWaits.Waiter {

    /**
     * How an await ended with the lock taken back: the new hold, and whether it was "signalled" (or its entry lapsed: a
     * spurious wake-up), its "timeout" came, or it was "interrupted".
     */
    record Resumed(Hold hold, String outcome) {

        boolean signalled() {
            return outcome.equals("signalled");
        }
    }

    private static final Logger log = LoggerFactory.getLogger(ConditionAwait.class);

    private enum Phase { JOINING, RELEASING, WAITING, LEAVING, REACQUIRING }

    private final SingleServerEngine engine;
    private final RedisCondition condition;
    private final LockKeys keys;
    // the hold given up; its owner awaits and takes the lock back
    private final Hold hold;
    private final String owner;
    private final String awaitId;
    // "the thread" or "the handle", for messages
    private final String who;
    private final String lostAdvice;
    private final String startingThread = Thread.currentThread().getName();
    private final long stayMillis;
    private final long lease;
    private final boolean renewed;
    // when the await began, by the client's ticker
    private final long start;
    private final long waitNanos;
    private final boolean forever;
    // complete once the owner waits for a signal (its hold given up), or the await ended before; for a blocking caller
    private final CompletableFuture<Void> waiting = new CompletableFuture<>();
    // complete once the wait for a signal is over (the lock is being taken back), or the await ended before
    private final CompletableFuture<Void> waitOver = new CompletableFuture<>();
    // a signal for this await came
    private volatile boolean signalled;
    // something may have changed: ask Redis whether it is still in the wait set
    private volatile boolean recheck;
    // guarded by lock
    private Phase phase = Phase.JOINING;
    private long joinSent;
    private boolean joinInDoubt;
    private boolean listening;
    private boolean waitEnded;
    private boolean staying;
    private long nextStayAt;
    private long retryNanos;
    private ScheduledFuture<?> timer;
    private ScheduledFuture<?> deadline;
    private CompletableFuture<Hold> reacquiring;
    // why a stop was asked for ("interrupted", "cancelled"), or null
    private String stop;
    private String outcome = "failed";

    private ConditionAwait(SingleServerEngine engine, RedisCondition condition, LockKeys keys, Hold hold, String who,
            String lostAdvice, long waitNanos, boolean forever) {
        super(engine);
        this.engine = engine;
        this.start = nanoTime();
        this.condition = condition;
        this.keys = keys;
        this.hold = hold;
        this.owner = hold.owner;
        this.awaitId = engine.conditionWaits().nextAwaitId();
        this.who = who;
        this.lostAdvice = lostAdvice;
        this.stayMillis = engine.core.defaultLeaseMillis();
        this.renewed = hold.renewed();
        this.lease = renewed ? engine.core.defaultLeaseMillis() : hold.leaseMillis();
        this.waitNanos = waitNanos;
        this.forever = forever;
    }

    /**
     * Starts an await of {@code hold}'s owner, which holds the write lock; it gives up every hold of it.
     *
     * @param who "the thread" or "the handle", for messages
     * @param lostAdvice what a lease-lost exception tells the owner to do, after the reason
     */
    static ConditionAwait start(SingleServerEngine engine, RedisCondition condition, LockKeys keys, Hold hold,
            String who, String lostAdvice, long waitNanos, boolean forever) {
        ConditionAwait await = new ConditionAwait(engine, condition, keys, hold, who, lostAdvice, waitNanos, forever);
        await.begin(await::join);
        return await;
    }

    /** Completes once the owner waits for a signal, its hold given up (or the await ended before). */
    CompletableFuture<Void> waiting() {
        return waiting;
    }

    /** Completes once the wait for a signal is over and the lock is being taken back (or the await ended before). */
    CompletableFuture<Void> waitOver() {
        return waitOver;
    }

    @Override
    public String owner() {
        return owner;
    }

    @Override
    public String lockKey() {
        return keys.lock();
    }

    @Override
    public String awaitId() {
        return awaitId;
    }

    @Override
    public void signalled() {
        signalled = true;
        step(this::look);
    }

    @Override
    public void wake() {
        recheck = true;
        step(this::look);
    }

    // ---- joining and releasing ------------------------------------------------------------------

    /** Enters the client's awaits, then joins the wait set: from then on a signal may pick the owner. */
    private void join() {
        engine.conditionWaits().enter(this);
        joinSent = nanoTime();
        sendJoin();
    }

    private void sendJoin() {
        onReply(condition.scriptAsync("join", owner, Long.toString(stayMillis), awaitId), this::joined);
    }

    private void joined(Long joined, Throwable error) {
        if (error instanceof RedisUnavailableException) {
            // its reply lost, maybe after it joined: sent again until Redis answers (a join run twice joins once)
            joinInDoubt = true;
            retryLater(this::sendJoin);
            return;
        }
        if (error != null) {
            fail(error);
            return;
        }
        retryNanos = 0;
        if (joined < 0) {
            engine.losses().reportLost(hold, "Redis no longer had it when " + who + " awaited condition '"
                    + condition.name() + "'");
            // only a join in doubt can have joined: while the owner held the lock, as it did then
            if (!joinInDoubt) {
                fail(lost());
                return;
            }
            leave(left -> {
                if (left) {
                    fail(lost());
                } else if (giveUpLost()) {
                    // the lease ran out after the first join, and another holder signalled it: honoured
                    waitOver("signalled");
                }
            });
            return;
        }
        phase = Phase.RELEASING;
        // every hold goes: the last local hold releases all of the owner's holds in Redis
        while (hold.holds() > 1) {
            hold.drop();
        }
        onReply(engine.releases().releaseLastAsync(hold), (done, failure) -> released(failure));
    }

    /**
     * The release of every hold after the join was answered. When its outcome is unknown (no reply in time: it may
     * have run, and a signal may have picked the owner since), it is sent again until Redis answers: either way the
     * owner holds nothing then, and waits as if the first had been answered. When Redis no longer had the lock, the
     * owner leaves the wait set and the await fails with the lease lost, unless a signal had picked it first.
     */
    private void released(Throwable error) {
        if (error == null) {
            startWaiting();
        } else if (error instanceof RedisUnavailableException) {
            releaseAgain();
        } else if (error instanceof LeaseLostException) {
            leave(left -> {
                if (left) {
                    fail(error);
                } else {
                    waitOver("signalled"); // Redis no longer had the lock at release, and a signal came first
                }
            });
        } else if (engine.core.isClosed()) {
            fail(error); // its entries lapse
        } else {
            // refused: no entry is left of an await that does not wait
            leave(left -> {
                if (!left) {
                    log.warn("condition '{}' of lock '{}': a signal reached an await that failed ({}); the next await"
                            + " or waiter of the condition may wait for another signal", condition.name(),
                            condition.lockName(), error.toString());
                }
                fail(error);
            });
        }
    }

    private void releaseAgain() {
        onReply(engine.releases().releaseAgainAsync(hold), (left, error) -> {
            if (error instanceof RedisUnavailableException) {
                retryLater(this::releaseAgain);
            } else if (error != null) {
                fail(error);
            } else {
                retryNanos = 0;
                startWaiting();
            }
        });
    }

    /**
     * Ends the holds of a lease found lost here, as unlocking each would: the lock is taken afresh next. Sends nothing
     * but the clean-up of a lost hold. False if the client closed, which ended the await.
     */
    private boolean giveUpLost() {
        while (hold.holds() > 1) {
            hold.drop();
        }
        try {
            engine.release(hold, 0, false);
        } catch (LeaseLostException expected) {
            // the hold was lost: released here, and cleaned up in Redis by owner
        } catch (IllegalStateException closed) {
            fail(closed);
            return false;
        }
        return true;
    }

    // ---- waiting --------------------------------------------------------------------------------

    private void startWaiting() {
        phase = Phase.WAITING;
        waiting.complete(null);
        listening = true;
        if (engine.routes().listenForWakeUps(keys.lock(), this, joinSent)) {
            recheck = true; // the lock's shard channel was confirmed after the join
        }
        nextStayAt = nanoTime() + stayInterval();
        if (!forever) {
            deadline = schedule(this::look, start + Math.min(Math.max(0, waitNanos), Long.MAX_VALUE / 2));
        }
        look();
    }

    /** What the await does while it waits, on every event: the first of signalled, closed, stopped, look, time up. */
    private void look() {
        if (phase != Phase.WAITING || staying) {
            return;
        }
        if (signalled) {
            waitOver("signalled");
        } else if (engine.core.isClosed()) {
            fail(engine.core.closedException());
        } else if (stop != null) {
            String why = stop;
            leave(left -> waitOver(left ? why : "signalled"));
        } else if (recheck || nanoTime() - nextStayAt >= 0) {
            stay();
        } else if (!forever && nanoTime() - start - waitNanos >= 0) {
            leave(left -> waitOver(left ? "timeout" : "signalled"));
        } else {
            timer = cancel(timer);
            timer = schedule(this::look, nextStayAt);
        }
    }

    /** Keeps the entry alive, and learns whether the owner is still in the wait set. */
    private void stay() {
        recheck = false;
        staying = true;
        onReply(condition.scriptAsync("stay", owner, Long.toString(stayMillis), awaitId), (still, error) -> {
            staying = false;
            if (error == null && still == 0) {
                waitOver("signalled"); // or its entry lapsed: a spurious wake-up
                return;
            }
            if (error == null) {
                retryNanos = 0;
                nextStayAt = nanoTime() + stayInterval();
            } else if (error instanceof RelockException) {
                retryNanos = RetryBackoff.after(retryNanos);
                nextStayAt = nanoTime() + retryNanos;
            } else {
                fail(error);
                return;
            }
            look();
        });
    }

    private long stayInterval() {
        return TimeUnit.MILLISECONDS.toNanos(Math.max(1, stayMillis / 3));
    }

    /**
     * Takes this await's entry out of the wait set, then tells {@code then} whether it ended unsignalled (taken out
     * now, or before by a 'leave' whose reply was lost, or lapsed); false when a signal had taken it out first. Redis
     * unavailable is waited out (the lock must be taken again next, which needs Redis too): an entry left behind would
     * take the next signal from an owner that waits. A closed client counts as left: its entries lapse.
     */
    private void leave(Consumer<Boolean> then) {
        phase = Phase.LEAVING;
        timer = cancel(timer);
        onReply(condition.scriptAsync("leave", owner, awaitId), (left, error) -> {
            if (error instanceof RedisUnavailableException && !engine.core.isClosed()) {
                retryLater(() -> leave(then));
            } else if (error instanceof RedisUnavailableException) {
                then.accept(true);
            } else if (error != null) {
                fail(error);
            } else {
                retryNanos = 0;
                then.accept(left == 1);
            }
        });
    }

    /** Sends {@code again} after the back-off, unless the client closed (which ends the await). */
    private void retryLater(Runnable again) {
        if (engine.core.isClosed()) {
            fail(engine.core.closedException());
            return;
        }
        retryNanos = RetryBackoff.after(retryNanos);
        timer = cancel(timer);
        timer = schedule(again, nanoTime() + retryNanos);
        if (timer == null) {
            fail(engine.core.closedException());
        }
    }

    /**
     * The wait is over ({@code how}): the await leaves the client's awaits, then takes the lock back, or, stopped by a
     * cancel before a signal, ends holding nothing.
     */
    private void waitOver(String how) {
        // a cancel that came while the time ran out is a cancel: nobody takes the lock back
        outcome = !how.equals("signalled") && "cancelled".equals(stop) ? "cancelled" : how;
        endWaiting();
        if (outcome.equals("cancelled")) {
            end(null, new CancellationException("the await of condition '" + condition.name() + "' of lock '"
                    + condition.lockName() + "' was cancelled before a signal came; the lock is not held"));
            return;
        }
        phase = Phase.REACQUIRING;
        // as any waiter, as long as it takes, through Redis being unavailable too; a refusal ends it
        reacquiring = engine.acquisition(condition.lockName(), keys, LockMode.WRITE, owner, lease, renewed)
                .startAsync(Long.MAX_VALUE, true, again -> again, null);
        onReply(reacquiring, this::reacquired);
    }

    private void reacquired(Hold again, Throwable error) {
        if (error instanceof CancellationException) {
            end(null, new CancellationException("the await of condition '" + condition.name() + "' of lock '"
                    + condition.lockName() + "' was cancelled after its " + outcome + "; the lock is not held"));
        } else if (error != null) {
            end(null, error);
        } else {
            again.acquiredOn(startingThread);
            end(new Resumed(again, outcome), null);
        }
    }

    @Override
    protected void stopped(String why) {
        if (stop != null) {
            return;
        }
        stop = why;
        if (phase == Phase.WAITING) {
            look();
        } else if (phase == Phase.REACQUIRING && why.equals("cancelled") && !outcome.equals("signalled")) {
            // nobody takes the lock back any more; a hold acquired just then is released by the acquisition
            reacquiring.cancel(false);
        }
        // before the wait, it is seen once the wait begins; a signalled one is taken back and passed on
    }

    private LeaseLostException lost() {
        return new LeaseLostException(condition.lockName(), hold.lostReason() + lostAdvice);
    }

    private void fail(Throwable error) {
        endWaiting();
        end(null, error);
    }

    /** The wait part ends, once: out of the client's awaits and off the lock's channel, and told to the metrics. */
    private void endWaiting() {
        if (waitEnded) {
            return;
        }
        waitEnded = true;
        // nobody's callbacks: only a blocking caller waits for these
        waiting.complete(null);
        waitOver.complete(null);
        timer = cancel(timer);
        deadline = cancel(deadline);
        engine.conditionWaits().leave(this);
        if (listening) {
            engine.routes().stopListeningForWakeUps(keys.lock(), this);
        }
        engine.events().conditionWaitEnded(condition.lockName(), nanoTime() - start, outcome);
    }

    @Override
    protected void cleanUp() {
        endWaiting();
    }

    @Override
    protected String describe() {
        return "the await of condition '" + condition.name() + "' of lock '" + condition.lockName() + "' by " + owner;
    }
}
