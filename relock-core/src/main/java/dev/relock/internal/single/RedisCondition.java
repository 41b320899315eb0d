package dev.relock.internal.single;

import dev.relock.LeaseLostException;
import dev.relock.LeaseState;
import dev.relock.RelockCondition;
import dev.relock.RedisUnavailableException;
import dev.relock.RelockException;
import dev.relock.internal.engine.Hold;
import dev.relock.internal.engine.LockKeys;
import dev.relock.internal.engine.LockMode;
import dev.relock.internal.script.LuaScript;
import io.lettuce.core.ScriptOutputType;
import java.util.Date;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A condition of a write lock on one Redis (see {@link RelockCondition}; the wait set in Redis is described in
 * condition.lua). Stateless view: any number may exist for one lock and name.
 *
 * <p>An await, on the thread that holds the lock: enters {@link ConditionWaits}, joins the wait set (only the writer
 * may, so no signal comes before), releases every hold of the lock (the last local hold releases all in Redis),
 * then parks until a signal message, a reason to look again ({@code 'stay'}, which also keeps its entry alive every
 * lease/3), its deadline or an interrupt; a deadline or interrupt leaves the wait set unless a signal came first.
 * Then it acquires the lock as any waiter, uninterruptibly (a signalled waiter finds its place in the lock's queue),
 * and re-enters it up to its earlier hold count.
 *
 * <p>Invariant: from the join on, a signal may pick the owner, so the await returns holding the lock (the signal
 * honoured) or throws with its entry taken out of the wait set unsignalled ('leave' answered 1), never otherwise. A
 * join or release whose outcome is unknown is sent again until Redis answers (both leave what one run leaves): the
 * thread does not act on a state of Redis it does not know. Nothing of an await is left to the background.
 */
final class RedisCondition implements RelockCondition {

    private static final Logger log = LoggerFactory.getLogger(RedisCondition.class);

    private final SingleServerEngine client;
    private final String lockName;
    private final LockKeys keys;
    private final String name;
    // the lock's five keys, then the wait set and its deadlines
    private final String[] scriptKeys;

    RedisCondition(SingleServerEngine client, String lockName, LockKeys keys, String name) {
        this.client = client;
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
        client.core.ensureOpen();
        return client.calls().await(client.calls().<List<String>>run(LuaScript.CONDITION, ScriptOutputType.MULTI,
                scriptKeys, "list"), "list the waiters of condition '" + name + "'", lockName);
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
        client.core.ensureOpen();
        long start = System.nanoTime();
        String owner = client.core.ownerOfCurrentThread();
        Hold hold = heldWriteLock(owner, "await");
        if (client.core.holds().get(keys, LockMode.READ, owner) != null) {
            throw new IllegalMonitorStateException("the current thread holds the read lock of '" + lockName
                    + "' too (a downgrade): awaiting would keep it reading while others write, and taking the"
                    + " write lock back would need an upgrade; release the read lock first");
        }
        int count = hold.holds();
        boolean renewed = hold.renewed();
        long lease = renewed ? client.core.defaultLeaseMillis() : hold.leaseMillis();
        long stayMillis = client.core.defaultLeaseMillis();
        String awaitId = client.conditionWaits().nextAwaitId();
        ConditionWaits.Waiter waiter = new ConditionWaits.Waiter(Thread.currentThread(), owner, keys.lock(), awaitId);
        String outcome = "failed";
        boolean listening = false;
        boolean interrupted = false;
        boolean restoreInterrupt = false;
        client.conditionWaits().enter(waiter);
        try {
            long joinSent = System.nanoTime();
            // From the join on, the owner may be in the wait set, so a signal may pick it: the await then returns
            // holding the lock (the signal taken), or throws with its entry out of the wait set unsignalled. It never
            // ends otherwise, or the signal would be lost (j.u.c.'s AbstractQueuedSynchronizer: a signal consumed by
            // a waiter is honoured or passed on)
            boolean joinInDoubt = false;
            long joined;
            try {
                joined = script("join", owner, Long.toString(stayMillis), awaitId);
            } catch (RedisUnavailableException e) {
                // its reply lost, maybe after it joined: sent again until Redis answers (a join run twice joins once)
                joinInDoubt = true;
                joined = answered(() -> script("join", owner, Long.toString(stayMillis), awaitId));
            }
            if (joined < 0) {
                client.reportLost(hold, "Redis no longer had it when the thread awaited condition '" + name + "'");
                // only a join in doubt can have joined: while this thread held the lock, as it did then
                if (!joinInDoubt || leftTheWaitSet(owner, awaitId)) {
                    throw new LeaseLostException(lockName, hold.lostReason() + "; unlock() each hold");
                }
                // the lease ran out after the first join, and another holder signalled it: honoured below
                giveUpLost(hold);
                outcome = "signalled";
            } else if (released(hold, owner, awaitId)) {
                listening = true;
                if (client.listenForWakeUps(keys.lock(), waiter, joinSent)) {
                    waiter.recheck = true; // the lock's shard channel was confirmed after the join
                }
                long nextStay = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Math.max(1, stayMillis / 3));
                long retryNanos = 0;
                while (true) {
                    if (waiter.signalled) {
                        outcome = "signalled";
                        break;
                    }
                    if (client.core.isClosed()) {
                        throw client.core.closedException();
                    }
                    long now = System.nanoTime();
                    if (waiter.recheck || now - nextStay >= 0) {
                        waiter.recheck = false;
                        try {
                            if (script("stay", owner, Long.toString(stayMillis), awaitId) == 0) {
                                outcome = "signalled"; // or its entry lapsed: a spurious wake-up
                                break;
                            }
                            retryNanos = 0;
                            nextStay = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Math.max(1, stayMillis / 3));
                        } catch (RelockException e) {
                            retryNanos = RetryBackoff.after(retryNanos);
                            nextStay = System.nanoTime() + retryNanos;
                        }
                        continue;
                    }
                    long left = forever ? Long.MAX_VALUE : waitNanos - (now - start);
                    if (left <= 0) {
                        outcome = leftTheWaitSet(owner, awaitId) ? "timeout" : "signalled";
                        break;
                    }
                    LockSupport.parkNanos(this, Math.min(left, nextStay - now));
                    if (Thread.interrupted()) {
                        if (!interruptible) {
                            restoreInterrupt = true;
                        } else if (leftTheWaitSet(owner, awaitId)) {
                            interrupted = true;
                            outcome = "interrupted";
                            break;
                        } else {
                            // signalled first: return normally, interrupted, as Condition allows
                            restoreInterrupt = true;
                            outcome = "signalled";
                            break;
                        }
                    }
                }
            } else {
                outcome = "signalled"; // Redis no longer had the lock at release, and a signal came first
            }
        } finally {
            client.conditionWaits().leave(waiter);
            if (listening) {
                client.stopListeningForWakeUps(keys.lock(), waiter);
            }
            client.events().conditionWaitEnded(lockName, System.nanoTime() - start, outcome);
        }
        reacquire(owner, count, lease, renewed);
        if (timedOut != null) {
            timedOut[0] = outcome.equals("timeout");
        }
        if (interrupted) {
            throw new InterruptedException("interrupted while awaiting condition '" + name + "' of lock '"
                    + lockName + "' (the lock is held again)");
        }
        if (restoreInterrupt) {
            Thread.currentThread().interrupt();
        }
        return forever ? 1 : waitNanos - (System.nanoTime() - start);
    }

    /**
     * Takes the lock again as any waiter, uninterruptibly, and re-enters it up to {@code count} holds; Redis
     * unavailable is waited out as {@code lock()} does, so it returns with every hold or throws with none (the lock
     * lost, or the acquisition refused).
     */
    private void reacquire(String owner, int count, long lease, boolean renewed) {
        Hold again;
        try {
            again = client.acquisition(lockName, keys, LockMode.WRITE, owner, lease, renewed)
                    .run(Long.MAX_VALUE, true, false);
        } catch (InterruptedException e) {
            throw new AssertionError("an uninterruptible acquisition does not throw InterruptedException", e);
        }
        while (again.holds() < count) {
            // counts are written absolute: a re-entry sent again sets the same count
            if (untilRedisAnswers(() -> client.reenter(again, lease, renewed)) == null) {
                throw client.core.closedException();
            }
        }
    }

    /**
     * Gives up every hold of the lock after the owner joined the wait set; whether the wait goes on. When the
     * release's outcome is unknown (no reply in time: it may have run, and a signal may have picked the owner since),
     * it is sent again until Redis answers: either way the owner holds nothing then, and waits as if the first had
     * been answered. When Redis no longer had the lock, the owner leaves the wait set and the lease lost is thrown;
     * false if a signal had picked it first, which the await then honours.
     *
     * @throws LeaseLostException if Redis no longer had the lock and the owner left the wait set unsignalled
     */
    private boolean released(Hold hold, String owner, String awaitId) {
        // every hold goes: the last local hold releases all of the owner's holds in Redis
        while (hold.holds() > 1) {
            hold.drop();
        }
        try {
            client.release(hold, 0, false);
            return true;
        } catch (RedisUnavailableException e) {
            answered(() -> client.releaseAgain(hold));
            return true;
        } catch (LeaseLostException e) {
            if (leftTheWaitSet(owner, awaitId)) {
                throw e;
            }
            return false;
        } catch (RuntimeException e) {
            // refused, or the client closed (its entries lapse): no entry is left of a thread that does not wait
            if (!client.core.isClosed() && !leftTheWaitSet(owner, awaitId)) {
                log.warn("condition '{}' of lock '{}': a signal reached an await that failed ({}); the next await or "
                        + "waiter of the condition may wait for another signal", name, lockName, e.toString());
            }
            throw e;
        }
    }

    /** Ends the holds of a lease found lost here, as unlocking each would: the lock is taken afresh next. */
    private void giveUpLost(Hold hold) {
        while (hold.holds() > 1) {
            hold.drop();
        }
        try {
            client.release(hold, 0, false);
        } catch (LeaseLostException expected) {
            // the hold was lost: released here, and cleaned up in Redis by owner
        }
    }

    /**
     * {@code call}'s result once Redis answered it ({@link #untilRedisAnswers}).
     *
     * @throws IllegalStateException if the client closed meanwhile
     */
    private <T> T answered(Supplier<T> call) {
        T result = untilRedisAnswers(call);
        if (result == null) {
            throw client.core.closedException();
        }
        return result;
    }

    /**
     * Whether the await {@code awaitId} ended unsignalled (its entry taken out now, or before by a 'leave' whose
     * reply was lost, or lapsed); false when a signal had taken it out first. Redis unavailable is waited out (the
     * lock must be taken again next, which needs Redis too): an entry left behind would take the next signal from a
     * thread that waits.
     */
    private boolean leftTheWaitSet(String owner, String awaitId) {
        Long left = untilRedisAnswers(() -> script("leave", owner, awaitId));
        return left == null || left == 1;
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
                    if (client.core.isClosed()) {
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
        signal("1");
    }

    @Override
    public void signalAll() {
        signal("all");
    }

    private void signal(String how) {
        client.core.ensureOpen();
        Hold hold = heldWriteLock(client.core.ownerOfCurrentThread(), "signal");
        long signalled = script("signal", hold.owner, how, client.graceMillis(), client.wakeRoute(keys),
                client.core.newHolderId());
        if (signalled < 0) {
            client.reportLost(hold, "Redis no longer had it when the thread signalled condition '" + name + "'");
            throw new LeaseLostException(lockName, hold.lostReason() + "; unlock() each hold");
        }
    }

    /**
     * The current thread's write hold of the lock.
     *
     * @throws IllegalMonitorStateException if it holds none
     * @throws LeaseLostException if it was found lost
     */
    private Hold heldWriteLock(String owner, String what) {
        Hold hold = client.core.holds().get(keys, LockMode.WRITE, owner);
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
        return client.calls().await(client.calls().<Long>run(LuaScript.CONDITION, ScriptOutputType.INTEGER,
                scriptKeys, args), args[0] + " condition '" + name + "'", lockName);
    }

    @Override
    public String toString() {
        return "RelockCondition[" + lockName + ", " + name + "]";
    }
}
