package dev.relock;

import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;

/**
 * A reentrant, fair, distributed lock held in Redis: the exclusive lock of
 * {@link RelockClient#lock(String)}, or one half of a {@link RelockReadWriteLock}; or the same
 * exclusive lock seen without re-entry, {@link RelockClient#nonReentrantLock(String)}.
 *
 * <p>The owner of a hold is the thread that acquired it (with the client's id, so threads of
 * different clients never share a hold). A thread may acquire a lock it holds again; it must
 * release it as many times. Waiters from every client are served first come, first served.
 *
 * <p><b>Without re-entry.</b> Through a view from {@link RelockClient#nonReentrantLock(String)}, a
 * thread that holds the lock (through any view of its name in this client) does not acquire it
 * again: {@link #lock()}, {@link #lock(long, TimeUnit)}, {@link #lockInterruptibly()},
 * {@link #lockInterruptibly(long, TimeUnit)} and {@link #acquire()} throw
 * {@link IllegalStateException} at once, naming the lock, where they would otherwise wait for the
 * thread itself forever; the {@code tryLock} and {@code tryAcquire} methods return false or empty at
 * once, whatever their wait. A hold already lost throws {@link LeaseLostException} instead, as a
 * re-entry would. Everything else, the asynchronous methods included (their handles never re-enter),
 * is the same.
 *
 * <p>A hold has a lease kept by Redis. Without an explicit lease, the client's lease keeper
 * renews it every lease/3 for as long as it is held. With an explicit lease
 * ({@link #lock(long, TimeUnit)}, {@link #tryLock(long, long, TimeUnit)}) it is not renewed and
 * ends when the lease runs out, unless the holder extends it ({@link #extendLease}). A hold whose lease was lost while held is reported to the
 * client's {@link LeaseLostListener}, makes {@link #isHeldByCurrentThread()} false and makes
 * {@link #unlock()} throw {@link LeaseLostException}.
 *
 * <p>Every fresh acquisition gets a fencing token greater than that of every earlier acquisition
 * of this name: pass it to the resource you protect so it can reject a stale holder.
 *
 * <p>Redis trouble surfaces as {@link RelockException} (unchecked) after at most the command
 * timeout, except while an acquisition waits: {@link #lock()} and {@link #lockInterruptibly()} keep
 * trying through Redis being unavailable, and a wait with a deadline ({@link #tryLock(long, TimeUnit)},
 * {@link #tryAcquire(Duration)}, {@link #tryAcquireAsync(Duration)}) keeps trying until its deadline,
 * then throws {@link RedisUnavailableException} if its last try still found Redis unavailable. A single
 * try ({@link #tryLock()}, a wait of zero) fails at once.
 *
 * <p><b>Asynchronous acquisition.</b> {@link #acquireAsync()} and {@link #tryAcquireAsync} return
 * at once; no thread waits while the lock is taken: the next attempt is started by the wake-up
 * message of the release, or by a timer at the holder's lease end. Their handles are owned by the
 * handle, not by a thread: any thread may close them, and they are not reentrant, neither with
 * each other nor with holds of threads. A second acquisition of a lock this client already holds
 * through a handle (or a thread) waits like that of any other owner; thread-owned methods such as
 * {@link #unlock()}, {@link #isHeldByCurrentThread()} and {@link #getHoldCount()} do not see them.
 * This suits code with no stable thread (futures, Reactor, Kotlin coroutines), where "the current
 * thread" means nothing and a thread-owned lock would refuse the release.
 *
 * <p>The returned stages complete on one of the client's timer threads (the Lettuce event
 * executors; never a Lettuce I/O thread), on the thread that cancels or closes the client, or, when the
 * outcome is known before the call returns (a command refused while disconnected), on the
 * calling thread. Callbacks must not
 * block there, and closing a handle blocks for a round trip that such a thread would have to
 * read itself: chain the work and the close with the {@code *Async} methods of
 * {@link CompletionStage} and an executor of your own. Cancelling the stage's {@link CompletionStage#toCompletableFuture()
 * future} withdraws the acquisition from the queue; a lock acquired just then is released, so
 * nothing ownerless is left. Closing the client fails pending stages with
 * {@link IllegalStateException}.
 */
public interface RelockLock extends Lock {

    /** The lock's name as given to {@link RelockClient#lock(String)}. */
    String name();

    /**
     * Acquires the lock, waiting as long as it takes, with a lease renewed while held. Interrupts
     * do not stop the wait; the thread's interrupt status is kept. Redis trouble is retried.
     */
    @Override
    void lock();

    /**
     * Acquires the lock with a lease of {@code lease} that is not renewed.
     *
     * @throws IllegalArgumentException if lease is not positive
     */
    void lock(long lease, TimeUnit unit);

    /** As {@link #lock()}, but stops with InterruptedException when the thread is interrupted. */
    @Override
    void lockInterruptibly() throws InterruptedException;

    /**
     * As {@link #lock(long, TimeUnit)}: acquires the lock with a lease of {@code lease} that is not renewed, waiting
     * as long as it takes; but stops with InterruptedException when the thread is interrupted, before or while it
     * waits, as {@link #lockInterruptibly()} does. Redis trouble is retried.
     *
     * @throws NullPointerException if unit is null
     * @throws IllegalArgumentException if lease is not positive, or on Redlock not longer than the clock drift
     *     allowance
     * @throws InterruptedException if the thread was interrupted; it holds nothing new then and its interrupt
     *     status is cleared
     */
    void lockInterruptibly(long lease, TimeUnit unit) throws InterruptedException;

    /**
     * Acquires the lock if it is free and nobody is queued for it, without waiting.
     *
     * @throws RelockException if Redis cannot be reached within the command timeout
     */
    @Override
    boolean tryLock();

    /**
     * Acquires the lock, waiting up to {@code wait}; a wait of zero or less tries once. While Redis is
     * unavailable (down, unreachable, not answering within the command timeout, failing over) the wait
     * tries again with back-off (50 ms, doubling up to 2 s), the last try at its deadline at the latest;
     * whether Redis answered that last try decides how it ends.
     *
     * @return whether the lock was acquired; false when the wait ended with Redis answering that the lock
     *     is held
     * @throws RedisUnavailableException if the last try of the wait (the only one, for a wait of zero)
     *     found Redis unavailable, with what went wrong as its cause; never later than the wait plus the
     *     command timeout
     * @throws RelockException if Redis refused the command (a key of another type at the lock's name)
     */
    @Override
    boolean tryLock(long wait, TimeUnit unit) throws InterruptedException;

    /**
     * Acquires the lock with a lease that is not renewed, waiting up to {@code wait}, through Redis being
     * unavailable as {@link #tryLock(long, TimeUnit)} does.
     *
     * @throws IllegalArgumentException if lease is not positive
     */
    boolean tryLock(long wait, long lease, TimeUnit unit) throws InterruptedException;

    /**
     * Releases one hold of the current thread.
     *
     * @throws IllegalMonitorStateException if the current thread does not hold the lock
     * @throws LeaseLostException if it held the lock but the lease was lost meanwhile
     */
    @Override
    void unlock();

    /**
     * The condition named {@value RelockCondition#DEFAULT_NAME} of this write lock, shared by every client (see
     * {@link RelockCondition}); each call returns a view of the same condition.
     *
     * @throws UnsupportedOperationException on a read lock (as {@code ReentrantReadWriteLock.ReadLock}), and on a
     *     Redlock client
     */
    @Override
    RelockCondition newCondition();

    /**
     * The condition with this name of this write lock, shared by every client that names it.
     *
     * @param name 1 to 64 letters, digits, '-', '_' or '.'
     * @throws NullPointerException if name is null
     * @throws IllegalArgumentException if name is empty, too long or has other characters
     * @throws UnsupportedOperationException on a read lock, and on a Redlock client
     */
    RelockCondition newCondition(String name);

    /**
     * Acquires the lock as {@link #lock()} does and returns a handle whose {@code close()} releases
     * it, for try-with-resources.
     */
    LockHandle acquire();

    /**
     * Acquires the lock as {@link #tryLock(long, TimeUnit)} does.
     *
     * @return the handle, or empty if the lock was not acquired within {@code wait}
     */
    Optional<LockHandle> tryAcquire(Duration wait) throws InterruptedException;

    /**
     * Acquires the lock with a lease that is not renewed, as {@link #tryLock(long, long, TimeUnit)}.
     *
     * @return the handle, or empty if the lock was not acquired within {@code wait}
     */
    Optional<LockHandle> tryAcquire(Duration wait, Duration lease) throws InterruptedException;

    /**
     * Acquires the lock for a new handle, waiting as long as it takes, with a lease renewed while
     * held; Redis trouble is retried with back-off, as {@link #lock()} does. Returns at once. See
     * the class comment for who owns the handle and which thread completes the stage.
     *
     * @return a stage that completes with the handle; exceptionally with
     *     {@link IllegalStateException} if the client is closed meanwhile
     * @throws IllegalStateException if the client is closed
     */
    CompletionStage<LockHandle> acquireAsync();

    /**
     * Acquires the lock for a new handle, with a renewed lease, waiting up to {@code wait}; a wait
     * of zero or less tries once. While Redis is unavailable the wait tries again until its deadline,
     * as {@link #tryLock(long, TimeUnit)} does. Returns at once.
     *
     * @return a stage that completes with the handle, or with empty when the wait ended with the lock
     *     held by another; exceptionally with {@link RedisUnavailableException} when the last try of
     *     the wait found Redis unavailable (no later than the wait plus the command timeout), with
     *     {@link RelockException} when Redis refused the command, and with {@link IllegalStateException}
     *     if the client is closed meanwhile
     * @throws IllegalStateException if the client is closed
     */
    CompletionStage<Optional<LockHandle>> tryAcquireAsync(Duration wait);

    /**
     * As {@link #tryAcquireAsync(Duration)}, with an explicit lease that is not renewed.
     *
     * @throws IllegalArgumentException if lease is not positive
     */
    CompletionStage<Optional<LockHandle>> tryAcquireAsync(Duration wait, Duration lease);

    /**
     * Extends the lease of the current thread's hold of this lock, as {@link LockHandle#extendLease} extends a
     * handle's: once this returns, Redis keeps it at least {@code lease} from when the request was sent, and never
     * less than before; an explicit lease stays explicit, a renewed one stays renewed (each renewal from then on for
     * the longer of its lease and {@code lease}). The thread's re-entries share the one hold and its lease. Holds of
     * handles ({@link #acquire()}, {@link #acquireAsync()}) are extended through their handle.
     *
     * @throws NullPointerException if lease is null
     * @throws IllegalArgumentException if lease is zero or negative, or on Redlock not longer than the clock drift
     *     allowance
     * @throws IllegalMonitorStateException if the current thread does not hold this lock
     * @throws LeaseLostException if the thread's hold was lost before, or Redis no longer has it: it is reported
     *     lost then, once; every hold must still be {@link #unlock() unlocked}
     * @throws RedisUnavailableException if Redis did not answer within the command timeout; the lease is the one
     *     the client counted before
     */
    void extendLease(Duration lease);

    /** Whether any owner, in any client, holds the lock now. One round trip. */
    boolean isLocked();

    /** Whether the current thread holds the lock and its lease is not known to be lost. No round trip. */
    boolean isHeldByCurrentThread();

    /**
     * Whether the thread whose {@link Thread#getId()} is {@code threadId} holds the lock through this client, and its
     * lease is not known to be lost: {@link #isHeldByCurrentThread()} for another thread of this JVM. A thread of
     * another client never holds it here (owners are this client's id and the thread's id); nor does a handle of
     * {@link #acquireAsync()}, which belongs to no thread. No round trip.
     *
     * @throws IllegalArgumentException if threadId is not positive (no thread has such an id)
     */
    boolean isHeldByThread(long threadId);

    /** How many holds the current thread has on this lock (0 if none). No round trip. */
    int getHoldCount();

    /** The lease left on the lock in Redis, whoever holds it; empty if it is not held. */
    Optional<Duration> remainingLease();

    /**
     * The fencing token to write with: the current thread's own hold's when it holds this lock (no round
     * trip), even after its lease was lost and somebody else took the lock, so a fenced resource refuses
     * the late write; otherwise the current holder's, whoever it is, as Redis reports it.
     *
     * <p>An {@code OptionalLong}, where {@link LockHandle#fencingToken()} is a {@code long}: this object is a view
     * of a name that nobody may hold, so it may have no token to give; a handle exists only once an acquisition
     * got its token, and keeps it.
     *
     * @return empty if neither this thread nor anybody else holds the lock
     */
    OptionalLong fencingToken();

    /**
     * Deletes the lock whoever holds it and wakes the next waiter: an operator's tool for a lock
     * left by a stuck process. A writer's client is told at once (its lease is reported lost); a
     * reader, or a writer whose client did not hear it, finds out at its next renewal or unlock.
     *
     * @return whether the lock was held
     */
    boolean forceUnlock();
}
