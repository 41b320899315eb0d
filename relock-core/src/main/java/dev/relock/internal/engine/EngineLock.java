package dev.relock.internal.engine;

import dev.relock.LeaseLostException;
import dev.relock.LeaseState;
import dev.relock.LockHandle;
import dev.relock.RelockCondition;
import dev.relock.RelockLock;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * One mode of a named lock, on whatever engine: the exclusive lock and the write half of a read-write
 * lock are the WRITE mode of a name, the read half is its READ mode (see {@link RelockLock} for the
 * contract). A stateless view: holds live in the client's {@link HoldTable}, so two objects of one
 * name and mode agree. Whether a thread's second acquisition re-enters its hold is the view's choice
 * ({@code reentrant}), not the hold's: a non-reentrant view refuses it, a reentrant one of the same
 * name re-enters a hold the other took. Each blocking method maps onto one
 * {@link #acquire(long, boolean, long, boolean)}, each asynchronous one onto a fresh acquisition owned
 * by the handle it will make; how a lock is taken, re-entered and released is the {@link Engine}'s.
 * Public because the Redlock engine takes these in {@link Engine#multiLock}.
 */
public final class EngineLock implements RelockLock {

    private final EngineClient client;
    private final Engine engine;
    private final String name;
    private final LockKeys keys;
    private final LockMode mode;
    // false for RelockClient.nonReentrantLock: a thread that holds the lock does not acquire it again here
    private final boolean reentrant;
    // a condition's name goes into its keys as it is: nothing that could break the hash tag or a message line
    private static final Pattern CONDITION_NAME = Pattern.compile("[A-Za-z0-9._-]{1,64}");

    EngineLock(EngineClient client, String name, LockKeys keys, LockMode mode) {
        this(client, name, keys, mode, true);
    }

    EngineLock(EngineClient client, String name, LockKeys keys, LockMode mode, boolean reentrant) {
        this.client = client;
        this.engine = client.engine();
        this.name = name;
        this.keys = keys;
        this.mode = mode;
        this.reentrant = reentrant;
    }

    @Override
    public String name() {
        return name;
    }

    /** The keys of this lock. */
    public LockKeys keys() {
        return keys;
    }

    // ---- acquiring ------------------------------------------------------------------------

    /**
     * Acquires or re-enters the lock for the current thread.
     *
     * @param waitNanos how long to wait; zero or less tries once without waiting
     * @param forever wait without a deadline
     * @param leaseMillis an explicit lease, or {@link EngineClient#RENEWED} for the client's renewed lease
     * @param interruptible whether an interrupt ends the wait with InterruptedException
     * @return the hold, or null if the wait ended first (or, on a non-reentrant view, at once when the thread holds
     *     the lock and the wait has a deadline)
     * @throws IllegalStateException on a non-reentrant view when the thread holds the lock and the wait has none
     */
    private Hold acquire(long waitNanos, boolean forever, long leaseMillis, boolean interruptible)
            throws InterruptedException {
        client.ensureOpen();
        if (interruptible && Thread.interrupted()) {
            throw new InterruptedException("interrupted before acquiring " + describe(mode, name));
        }
        boolean renewed = leaseMillis == EngineClient.RENEWED;
        long lease = renewed ? client.defaultLeaseMillis() : leaseMillis;
        String owner = client.ownerOfCurrentThread();
        Hold held = client.holds().get(keys, mode, owner);
        if (held != null) {
            if (held.state() == LeaseState.LOST) {
                throw Engine.lostAtReentry(held);
            }
            if (!reentrant) {
                return refuseReentry(forever);
            }
            return engine.reenter(held, lease, renewed);
        }
        if (mode == LockMode.WRITE && client.holds().get(keys, LockMode.READ, owner) != null) {
            throw new IllegalMonitorStateException("the current thread holds the read lock of '" + name
                    + "' and asks for its write lock: upgrading would deadlock with any other reader doing the same;"
                    + " release the read lock first");
        }
        return engine.acquisition(name, keys, mode, owner, lease, renewed).run(waitNanos, forever, interruptible);
    }

    /**
     * A non-reentrant view's answer to a thread that holds the lock: a wait with a deadline ends at once without the
     * lock (null), as it could end no other way while the thread holds it; one without throws rather than wait for
     * the thread itself forever.
     */
    private Hold refuseReentry(boolean forever) {
        if (forever) {
            throw new IllegalStateException(describe(mode, name) + " is held by the current thread ("
                    + Thread.currentThread().getName() + ") and is not reentrant: unlock it before acquiring it again");
        }
        return null;
    }

    /** A handle whose close() gives up one hold of {@code hold}. */
    private LockHandle handleOf(Hold hold) {
        return new HoldHandle(engine, hold);
    }

    /** The current thread's hold on this lock in this client, or null. No round trip. */
    private Hold currentThreadsHold() {
        return client.holds().get(keys, mode, client.ownerOfCurrentThread());
    }

    /**
     * A fresh acquisition owned by the handle it will make, not by a thread: never a re-entry.
     *
     * @param leaseMillis an explicit lease, or {@link EngineClient#RENEWED} for the client's renewed lease
     */
    private SteppedAcquisition handleOwned(long leaseMillis) {
        client.ensureOpen();
        boolean renewed = leaseMillis == EngineClient.RENEWED;
        return engine.acquisition(name, keys, mode, client.newHolderId(),
                renewed ? client.defaultLeaseMillis() : leaseMillis, renewed);
    }

    @Override
    public void lock() {
        acquireUninterruptibly(EngineClient.RENEWED);
    }

    @Override
    public void lock(long lease, TimeUnit unit) {
        acquireUninterruptibly(leaseMillis(lease, unit));
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        acquire(Long.MAX_VALUE, true, EngineClient.RENEWED, true);
    }

    @Override
    public void lockInterruptibly(long lease, TimeUnit unit) throws InterruptedException {
        acquire(Long.MAX_VALUE, true, leaseMillis(lease, unit), true);
    }

    @Override
    public boolean tryLock() {
        try {
            return acquire(0, false, EngineClient.RENEWED, false) != null;
        } catch (InterruptedException e) {
            throw new AssertionError("a single attempt does not park", e);
        }
    }

    @Override
    public boolean tryLock(long wait, TimeUnit unit) throws InterruptedException {
        Objects.requireNonNull(unit, "unit");
        return acquire(unit.toNanos(wait), false, EngineClient.RENEWED, true) != null;
    }

    @Override
    public boolean tryLock(long wait, long lease, TimeUnit unit) throws InterruptedException {
        Objects.requireNonNull(unit, "unit");
        return acquire(unit.toNanos(wait), false, leaseMillis(lease, unit), true) != null;
    }

    @Override
    public LockHandle acquire() {
        return handleOf(acquireUninterruptibly(EngineClient.RENEWED));
    }

    @Override
    public Optional<LockHandle> tryAcquire(Duration wait) throws InterruptedException {
        Objects.requireNonNull(wait, "wait");
        return handle(acquire(Durations.saturatedNanos(wait), false, EngineClient.RENEWED, true));
    }

    @Override
    public Optional<LockHandle> tryAcquire(Duration wait, Duration lease) throws InterruptedException {
        Objects.requireNonNull(wait, "wait");
        Objects.requireNonNull(lease, "lease");
        long leaseMillis = leaseMillis(Durations.saturatedNanos(lease), TimeUnit.NANOSECONDS);
        return handle(acquire(Durations.saturatedNanos(wait), false, leaseMillis, true));
    }

    @Override
    public CompletionStage<LockHandle> acquireAsync() {
        return handleOwned(EngineClient.RENEWED).startAsync(Long.MAX_VALUE, true, this::handleOf, null);
    }

    @Override
    public CompletionStage<Optional<LockHandle>> tryAcquireAsync(Duration wait) {
        Objects.requireNonNull(wait, "wait");
        return handleOwned(EngineClient.RENEWED).startAsync(Durations.saturatedNanos(wait), false,
                hold -> Optional.of(handleOf(hold)), Optional.empty());
    }

    @Override
    public CompletionStage<Optional<LockHandle>> tryAcquireAsync(Duration wait, Duration lease) {
        Objects.requireNonNull(wait, "wait");
        Objects.requireNonNull(lease, "lease");
        long leaseMillis = leaseMillis(Durations.saturatedNanos(lease), TimeUnit.NANOSECONDS);
        return handleOwned(leaseMillis).startAsync(Durations.saturatedNanos(wait), false,
                hold -> Optional.of(handleOf(hold)), Optional.empty());
    }

    @Override
    public boolean isHeldByCurrentThread() {
        return isLive(currentThreadsHold());
    }

    @Override
    public boolean isHeldByThread(long threadId) {
        if (threadId <= 0) {
            throw new IllegalArgumentException("thread id for " + describe(mode, name) + " must be positive, as"
                    + " Thread.getId() is: " + threadId);
        }
        return isLive(client.holds().get(keys, mode, client.ownerOfThread(threadId)));
    }

    /** Whether {@code hold} is there, held, and its lease not known to be over. */
    private boolean isLive(Hold hold) {
        // an explicit lease may have run out before the lease keeper's next look noticed
        return hold != null && hold.state() == LeaseState.HELD && !hold.leaseEndedBy(client.ticker().nanoTime());
    }

    @Override
    public int getHoldCount() {
        Hold hold = currentThreadsHold();
        return hold == null ? 0 : hold.holds();
    }

    private Optional<LockHandle> handle(Hold hold) {
        return hold == null ? Optional.empty() : Optional.of(handleOf(hold));
    }

    private Hold acquireUninterruptibly(long leaseMillis) {
        try {
            return acquire(Long.MAX_VALUE, true, leaseMillis, false);
        } catch (InterruptedException e) {
            throw new AssertionError("an uninterruptible wait does not throw InterruptedException", e);
        }
    }

    /** "lock 'name'" or "read lock 'name'", for messages. */
    private static String describe(LockMode mode, String name) {
        return mode == LockMode.WRITE ? "lock '" + name + "'" : "read lock '" + name + "'";
    }

    /**
     * An explicit lease in milliseconds, at least 1.
     *
     * @throws IllegalArgumentException if not positive, or too short for the engine
     */
    private long leaseMillis(long lease, TimeUnit unit) {
        Objects.requireNonNull(unit, "unit");
        if (lease <= 0) {
            throw new IllegalArgumentException("lease of lock '" + name + "' must be positive: " + lease + " " + unit);
        }
        long millis = Math.max(1, unit.toMillis(lease));
        engine.checkLease(name, millis, lease + " " + unit);
        return millis;
    }

    // ---- extending ------------------------------------------------------------------------

    @Override
    public void extendLease(Duration lease) {
        long leaseMillis = Durations.leaseMillis(lease, describe(mode, name));
        engine.checkLease(name, leaseMillis, lease.toString());
        client.ensureOpen();
        Hold hold = currentThreadsHold();
        if (hold == null) {
            throw new IllegalMonitorStateException(describe(mode, name) + " is not held by the current thread ("
                    + Thread.currentThread().getName() + "), so it has no lease to extend");
        }
        if (hold.state() == LeaseState.LOST) {
            // told once already, when it was found lost; each hold must still be unlocked
            throw new LeaseLostException(name, hold.lostReason() + "; unlock() each hold");
        }
        engine.extendLease(hold, leaseMillis);
    }

    // ---- releasing ------------------------------------------------------------------------

    @Override
    public void unlock() {
        client.ensureOpen();
        Hold hold = currentThreadsHold();
        if (hold == null) {
            throw new IllegalMonitorStateException(describe(mode, name) + " is not held by the current thread ("
                    + Thread.currentThread().getName() + ")");
        }
        engine.release(hold, 0, false);
    }

    @Override
    public boolean forceUnlock() {
        client.ensureOpen();
        return engine.forceUnlock(name, keys);
    }

    // ---- conditions -----------------------------------------------------------------------

    @Override
    public RelockCondition newCondition() {
        return newCondition(RelockCondition.DEFAULT_NAME);
    }

    @Override
    public RelockCondition newCondition(String conditionName) {
        Objects.requireNonNull(conditionName, "name");
        if (mode == LockMode.READ) {
            throw new UnsupportedOperationException("the read lock of '" + name + "' has no conditions, as"
                    + " ReentrantReadWriteLock's read lock has none: use the write lock's");
        }
        if (!CONDITION_NAME.matcher(conditionName).matches()) {
            throw new IllegalArgumentException("condition name of lock '" + name + "' must be 1 to 64 letters,"
                    + " digits, '-', '_' or '.': '" + conditionName + "'");
        }
        return engine.condition(name, keys, conditionName);
    }

    // ---- inspecting -----------------------------------------------------------------------

    @Override
    public boolean isLocked() {
        client.ensureOpen();
        return engine.isLocked(name, keys);
    }

    @Override
    public Optional<Duration> remainingLease() {
        client.ensureOpen();
        return engine.remainingLease(name, keys);
    }

    @Override
    public OptionalLong fencingToken() {
        Hold hold = currentThreadsHold();
        if (hold != null) {
            // the token this thread fences with, even if its lease was lost meanwhile: asking Redis would
            // hand it the next holder's token, which a fenced resource accepts
            return OptionalLong.of(hold.fencingToken);
        }
        // the largest token among the lock's current holders; inspect reports 0 for a free lock
        long token = client.inspect(name).fencingToken();
        return token == 0 ? OptionalLong.empty() : OptionalLong.of(token);
    }

    @Override
    public String toString() {
        String topology = engine.topology();
        return "RelockLock[" + name + (mode == LockMode.READ ? ", read" : "") + (reentrant ? "" : ", non-reentrant")
                + (topology == null ? "" : ", " + topology) + "]";
    }
}
