package dev.relock.internal.single;

import dev.relock.LeaseLostException;
import dev.relock.LeaseState;
import dev.relock.LockHandle;
import dev.relock.PermitHandle;
import dev.relock.RedisUnavailableException;
import dev.relock.RelockCondition;
import dev.relock.RelockException;
import dev.relock.internal.engine.Durations;
import dev.relock.internal.engine.Hold;
import dev.relock.internal.engine.HoldHandle;
import dev.relock.internal.engine.LockKeys;
import dev.relock.internal.engine.LockMode;
import dev.relock.internal.script.SingleServerScripts;
import io.lettuce.core.ScriptOutputType;
import java.time.Duration;
import java.util.Date;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A condition of a write lock on one Redis (see {@link RelockCondition}; the wait set in Redis is described in
 * condition.lua). Stateless view: any number may exist for one lock and name.
 *
 * <p>Every await is a {@link ConditionAwait}, which blocks no thread and keeps the invariant stated there: from the
 * join on, the await ends holding the lock again (a signal honoured) or with its entry out of the wait set
 * unsignalled. A thread's await waits for it in the thread, then re-enters the lock up to its earlier hold count. A
 * handle's await ({@link #awaitAsync}) lends the handle's hold to it and hands the hold it takes back to the handle;
 * one that nobody takes any more (the caller cancelled) is released, and a signal it came with passed on to the next
 * waiter ({@link #passOn}), so a cancel loses no signal either.
 */
final class RedisCondition implements RelockCondition {

    private static final Logger log = LoggerFactory.getLogger(RedisCondition.class);

    private final SingleServerEngine engine;
    private final String lockName;
    private final LockKeys keys;
    private final String name;
    // the lock's five keys, then the wait set and its deadlines
    private final String[] scriptKeys;

    RedisCondition(SingleServerEngine engine, String lockName, LockKeys keys, String name) {
        this.engine = engine;
        this.lockName = lockName;
        this.keys = keys;
        this.name = name;
        String[] lock = keys.all();
        String waiting = keys.lock() + ":cond:" + name;
        this.scriptKeys = new String[] {lock[0], lock[1], lock[2], lock[3], lock[4], waiting, waiting + ":live"};
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String lockName() {
        return lockName;
    }

    @Override
    public List<String> waiters() {
        engine.core.ensureOpen();
        return engine.calls().await(engine.calls().<List<String>>run(SingleServerScripts.CONDITION,
                ScriptOutputType.MULTI, scriptKeys, "list"), "list the waiters of condition '" + name + "'", lockName);
    }

    // ---- await --------------------------------------------------------------------------------

    @Override
    public void await() throws InterruptedException {
        await(0, true, true, null);
    }

    @Override
    public void awaitUninterruptibly() {
        try {
            await(0, true, false, null);
        } catch (InterruptedException e) {
            throw new AssertionError("an uninterruptible await does not throw InterruptedException", e);
        }
    }

    @Override
    public long awaitNanos(long nanosTimeout) throws InterruptedException {
        return await(nanosTimeout, false, true, null);
    }

    @Override
    public boolean await(long time, TimeUnit unit) throws InterruptedException {
        Objects.requireNonNull(unit, "unit");
        boolean[] timedOut = new boolean[1];
        await(unit.toNanos(time), false, true, timedOut);
        return !timedOut[0];
    }

    @Override
    public boolean awaitUntil(Date deadline) throws InterruptedException {
        Objects.requireNonNull(deadline, "deadline");
        boolean[] timedOut = new boolean[1];
        await(TimeUnit.MILLISECONDS.toNanos(deadline.getTime() - System.currentTimeMillis()), false, true, timedOut);
        return !timedOut[0];
    }

    /**
     * Waits in the calling thread for a {@link ConditionAwait} of its hold, then re-enters the lock up to its earlier
     * hold count. An interrupt stops the wait (the lock is taken back all the same) when {@code interruptible};
     * otherwise, or once the wait is over, the thread's interrupt status is kept.
     *
     * @param timedOut if not null, set to whether the time was up before a signal came
     * @return for a timed wait, an estimate of the time left when it returns, after the lock was taken again (zero
     *     or less once the deadline passed, as {@link java.util.concurrent.locks.Condition#awaitNanos} says); 1 for
     *     an untimed one
     */
    private long await(long waitNanos, boolean forever, boolean interruptible, boolean[] timedOut)
            throws InterruptedException {
        if (interruptible && Thread.interrupted()) {
            throw new InterruptedException("interrupted before awaiting condition '" + name + "' of lock '"
                    + lockName + "'");
        }
        engine.core.ensureOpen();
        long start = engine.core.ticker().nanoTime();
        String owner = engine.core.ownerOfCurrentThread();
        Hold hold = heldWriteLock(owner, "await");
        if (engine.core.holds().get(keys, LockMode.READ, owner) != null) {
            throw new IllegalMonitorStateException("the current thread holds the read lock of '" + lockName
                    + "' too (a downgrade): awaiting would keep it reading while others write, and taking the"
                    + " write lock back would need an upgrade; release the read lock first");
        }
        int count = hold.holds();
        boolean renewed = hold.renewed();
        long lease = renewed ? engine.core.defaultLeaseMillis() : hold.leaseMillis();
        ConditionAwait await = ConditionAwait.start(engine, this, keys, hold, "the thread", "; unlock() each hold",
                waitNanos, forever);
        boolean[] interrupted = {false};
        givingTheLockUp(await, interruptible, interrupted);
        awaitingASignal(await, interruptible, interrupted);
        ConditionAwait.Resumed resumed = takingTheLockBack(await, count, lease, renewed, interrupted);
        if (timedOut != null) {
            timedOut[0] = resumed.outcome().equals("timeout");
        }
        if (resumed.outcome().equals("interrupted")) {
            throw new InterruptedException("interrupted while awaiting condition '" + name + "' of lock '"
                    + lockName + "' (the lock is held again)");
        }
        if (interrupted[0]) {
            // interrupted with no stop asked for, or after a signal: it returns normally, as Condition allows
            Thread.currentThread().interrupt();
        }
        return forever ? 1 : waitNanos - (engine.core.ticker().nanoTime() - start);
    }

    // The three phases of a blocking await, each a wait of the thread for the await's machinery (named, so that a
    // thread dump, and ConditionModelTest's observer, tell where it is): joining the wait set and giving the lock up;
    // waiting for a signal; taking the lock back, then re-entering it up to its hold count.

    private void givingTheLockUp(ConditionAwait await, boolean interruptible, boolean[] interrupted) {
        waitFor(await.waiting(), await, interruptible, interrupted);
    }

    private void awaitingASignal(ConditionAwait await, boolean interruptible, boolean[] interrupted) {
        waitFor(await.waitOver(), await, interruptible, interrupted);
    }

    private ConditionAwait.Resumed takingTheLockBack(ConditionAwait await, int count, long lease, boolean renewed,
            boolean[] interrupted) {
        waitFor(await.result(), await, false, interrupted);
        ConditionAwait.Resumed resumed;
        try {
            resumed = await.result().get();
        } catch (ExecutionException e) {
            if (interrupted[0]) {
                Thread.currentThread().interrupt();
            }
            throw SerialWait.rethrown(e.getCause());
        } catch (InterruptedException e) {
            throw new AssertionError("the await's result is complete", e);
        }
        Hold again = resumed.hold();
        while (again.holds() < count) {
            // counts are written absolute: a re-entry sent again sets the same count
            if (untilRedisAnswers(() -> engine.reenter(again, lease, renewed)) == null) {
                throw engine.core.closedException();
            }
        }
        return resumed;
    }

    /**
     * Waits in the thread until {@code stage} or the await's result is complete, whatever their outcome. An interrupt
     * is noted in {@code interrupted} and, when {@code interruptible}, stops the await (it ends once the owner left
     * the wait set, unless a signal came first, and takes the lock back all the same).
     */
    private static void waitFor(CompletableFuture<?> stage, ConditionAwait await, boolean interruptible,
            boolean[] interrupted) {
        CompletableFuture<Object> either = CompletableFuture.anyOf(stage, await.result());
        while (!either.isDone()) {
            try {
                either.get();
            } catch (InterruptedException e) {
                interrupted[0] = true;
                if (interruptible) {
                    await.stop("interrupted");
                }
            } catch (ExecutionException e) {
                return; // told by the result
            }
        }
    }

    @Override
    public CompletionStage<Boolean> awaitAsync(LockHandle held, Duration timeout) {
        Objects.requireNonNull(held, "held");
        Objects.requireNonNull(timeout, "timeout");
        engine.core.ensureOpen();
        HoldHandle handle = handleOfThisLock(held);
        CompletableFuture<Boolean> awaited = new CompletableFuture<>();
        Hold lent = handle.lendForAwait(awaited);
        ConditionAwait await;
        try {
            await = ConditionAwait.start(engine, this, keys, lent, "the handle", "; close the handle",
                    Durations.saturatedNanos(timeout), false);
        } catch (RuntimeException e) {
            if (!handle.endAwait() && lent.state() == LeaseState.HELD) {
                engine.releases().releaseUnseen(lent); // closed while the await was starting: nobody else gives it up
            }
            throw e;
        }
        awaited.whenComplete((signalled, error) -> {
            if (awaited.isCancelled()) {
                await.stop("cancelled");
            }
        });
        await.result().whenComplete((resumed, error) -> handBack(handle, lent, awaited, resumed, error));
        return awaited;
    }

    /**
     * {@code held} as a handle of this client's handle-owned hold of this write lock.
     *
     * @throws IllegalArgumentException if it is another kind of handle, of another lock or client, or of a thread
     * @throws LeaseLostException if its lease was found lost
     */
    private HoldHandle handleOfThisLock(LockHandle held) {
        if (!(held instanceof HoldHandle handle) || held instanceof PermitHandle) {
            throw new IllegalArgumentException("awaiting condition '" + name + "' of lock '" + lockName + "' needs a"
                    + " handle of that lock from acquireAsync() or tryAcquireAsync(), not " + held);
        }
        Hold hold = handle.hold();
        if (!hold.keys.lock().equals(keys.lock()) || hold.mode != LockMode.WRITE) {
            throw new IllegalArgumentException("awaiting condition '" + name + "' of lock '" + lockName + "' needs a"
                    + " handle of that lock's write lock, not of the " + hold.mode.description + " '" + hold.lockName
                    + "'");
        }
        if (handle.state() == LeaseState.HELD && engine.core.holds().get(keys, LockMode.WRITE, hold.owner) != hold) {
            throw new IllegalArgumentException("the handle of lock '" + lockName + "' belongs to another relock"
                    + " client than condition '" + name + "': use a condition of the client that took it");
        }
        if (!engine.core.ownedByHandle(hold.owner)) {
            throw new IllegalArgumentException("the handle of lock '" + lockName + "' holds it for a thread"
                    + " (acquire() or tryAcquire()): that thread awaits condition '" + name + "' with await(), and"
                    + " signals with signal(); or take the lock with acquireAsync() for a handle of its own");
        }
        if (hold.state() == LeaseState.LOST) {
            throw new LeaseLostException(lockName, hold.lostReason() + "; close the handle");
        }
        return handle;
    }

    /**
     * Hands what the await of a handle's hold ended with to the handle, then tells the caller. A hold taken back that
     * nobody takes (the caller cancelled, or closed the handle) is given up, and a signal it came with is passed on
     * unless the caller was told of it. On the thread that completes the await.
     */
    private void handBack(HoldHandle handle, Hold lent, CompletableFuture<Boolean> awaited,
            ConditionAwait.Resumed resumed, Throwable error) {
        if (error != null) {
            if (!handle.endAwait() && lent.state() == LeaseState.HELD) {
                engine.releases().releaseUnseen(lent); // closed while its await failed before giving the hold up
            }
            awaited.completeExceptionally(error);
            return;
        }
        if (!handle.resume(resumed.hold(), awaited, resumed.signalled())) {
            return;
        }
        if (resumed.signalled()) {
            passOn(resumed.hold());
        } else {
            engine.releases().releaseUnseen(resumed.hold());
        }
    }

    /**
     * Passes on a signal that an await took and nobody acts on (its caller cancelled it, or closed its handle): as the
     * holder of {@code again}, signals the next waiter, then releases the lock. Redis unavailable is waited out with
     * back-off while the hold lasts. Without waiting; any thread.
     */
    private void passOn(Hold again) {
        String callId = engine.core.newHolderId();
        engine.handOff(() -> sendPassOn(again, callId, 0));
    }

    private void sendPassOn(Hold again, String callId, long retryNanos) {
        scriptAsync("signal", again.owner, "1", engine.graceMillis(), engine.routes().wakeRoute(keys), callId)
                .whenComplete((signalled, error) -> engine.handOff(() -> {
                    if (error instanceof RedisUnavailableException && again.state() == LeaseState.HELD
                            && !engine.core.isClosed()) {
                        long next = RetryBackoff.after(retryNanos);
                        try {
                            engine.timer().schedule(() -> sendPassOn(again, callId, next), next, TimeUnit.NANOSECONDS);
                            return;
                        } catch (RejectedExecutionException e) {
                            // the client closes: its holds are given up
                        }
                    }
                    if (error != null || signalled < 0) {
                        log.warn("condition '{}' of lock '{}': a signal taken by an await whose caller gave it up could"
                                + " not be passed on ({}); the next waiter may wait for another signal", name, lockName,
                                error != null ? error.toString() : "the lease was lost");
                    }
                    engine.releases().releaseUnseen(again);
                }));
    }

    /**
     * {@code call}'s result once Redis answered it, backing off while Redis is unavailable; null if the client
     * closed meanwhile. The interrupt status is kept aside while it waits (a set one would make every park return
     * at once) and put back before it returns.
     */
    private <T> T untilRedisAnswers(Supplier<T> call) {
        boolean interrupted = Thread.interrupted();
        try {
            long retryNanos = 0;
            while (true) {
                try {
                    return call.get();
                } catch (RedisUnavailableException e) {
                    if (engine.core.isClosed()) {
                        return null;
                    }
                    retryNanos = RetryBackoff.after(retryNanos);
                    LockSupport.parkNanos(this, retryNanos);
                    interrupted |= Thread.interrupted();
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    // ---- signal -------------------------------------------------------------------------------

    @Override
    public void signal() {
        engine.core.ensureOpen();
        signal(heldWriteLock(engine.core.ownerOfCurrentThread(), "signal"), "1", "the thread", "; unlock() each hold");
    }

    @Override
    public void signalAll() {
        engine.core.ensureOpen();
        signal(heldWriteLock(engine.core.ownerOfCurrentThread(), "signal"), "all", "the thread", "; unlock() each hold");
    }

    @Override
    public void signal(LockHandle held) {
        signal(heldThrough(held), "1", "the handle", "; close the handle");
    }

    @Override
    public void signalAll(LockHandle held) {
        signal(heldThrough(held), "all", "the handle", "; close the handle");
    }

    private void signal(Hold hold, String how, String who, String lostAdvice) {
        long signalled = script("signal", hold.owner, how, engine.graceMillis(), engine.routes().wakeRoute(keys),
                engine.core.newHolderId());
        if (signalled < 0) {
            engine.losses().reportLost(hold,
                    "Redis no longer had it when " + who + " signalled condition '" + name + "'");
            throw new LeaseLostException(lockName, hold.lostReason() + lostAdvice);
        }
    }

    /**
     * The hold of {@code held}, a handle that holds this write lock now.
     *
     * @throws IllegalMonitorStateException if it holds it no more (closed, or awaiting a condition)
     */
    private Hold heldThrough(LockHandle held) {
        Objects.requireNonNull(held, "held");
        engine.core.ensureOpen();
        HoldHandle handle = handleOfThisLock(held);
        if (handle.state() != LeaseState.HELD) {
            throw new IllegalMonitorStateException("the handle of lock '" + lockName + "' does not hold it now ("
                    + handle.state() + "), so it cannot signal condition '" + name + "'");
        }
        return handle.hold();
    }

    /**
     * The current thread's write hold of the lock.
     *
     * @throws IllegalMonitorStateException if it holds none
     * @throws LeaseLostException if it was found lost
     */
    private Hold heldWriteLock(String owner, String what) {
        Hold hold = engine.core.holds().get(keys, LockMode.WRITE, owner);
        if (hold == null) {
            throw new IllegalMonitorStateException("lock '" + lockName + "' is not held by the current thread ("
                    + Thread.currentThread().getName() + "), so it cannot " + what + " condition '" + name + "'");
        }
        if (hold.state() == LeaseState.LOST) {
            throw new LeaseLostException(lockName, hold.lostReason() + "; unlock() each hold");
        }
        return hold;
    }

    private long script(String... args) {
        return engine.calls().await(engine.calls().<Long>run(SingleServerScripts.CONDITION, ScriptOutputType.INTEGER,
                scriptKeys, args), args[0] + " condition '" + name + "'", lockName);
    }

    /**
     * condition.lua without waiting: fails with the {@link RelockException} a blocking call would throw, no later than
     * the command timeout. Any thread but an I/O thread.
     */
    CompletableFuture<Long> scriptAsync(String... args) {
        return engine.calls().within(engine.calls().<Long>run(SingleServerScripts.CONDITION, ScriptOutputType.INTEGER,
                scriptKeys, args), args[0] + " condition '" + name + "'", lockName);
    }

    @Override
    public String toString() {
        return "RelockCondition[" + lockName + ", " + name + "]";
    }
}
