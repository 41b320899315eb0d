package dev.relock;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;

/**
 * A condition of a {@link RelockLock}'s write lock, shared by every client: threads of any client wait in it until
 * a holder of the lock signals it, with the semantics of {@link Condition}.
 *
 * <p>A condition is named: {@link RelockLock#newCondition()} is the lock's condition named
 * {@value #DEFAULT_NAME}, {@link RelockLock#newCondition(String)} any other; every client that names the same lock
 * and condition waits in, and signals, the same wait set. Creating one costs nothing; the wait set lives in Redis
 * only while someone waits.
 *
 * <p><b>await.</b> Only the thread holding the write lock may await ({@link IllegalMonitorStateException}
 * otherwise). It joins the wait set while it still holds the lock, so no signal can come between, then gives up
 * every hold it has of the lock (one round trip each: join, release). When it is signalled, or its time is up, or
 * it is interrupted, it acquires the lock again like any waiter (in the lock's fair queue; a fresh acquisition with a
 * greater fencing token) and restores its hold count before it returns or throws, as {@link Condition} requires;
 * the re-acquisition waits as long as it takes, through Redis being unavailable too (a refusal, such as the
 * replication guard's {@code FAIL}, ends it with that exception and without the lock, as it would end
 * {@link RelockLock#lock()}). A hold with an explicit lease comes back with the same lease, a
 * renewed hold renewed. While waiting, the thread stays in the wait set by refreshing its entry every lease/3; the
 * entry of a waiter whose client died lapses after one lease and no signal goes to it.
 *
 * <p><b>signal.</b> Only the thread holding the write lock may signal. {@link #signal()} moves the waiter that joined
 * first (FIFO) from the wait set to the end of the lock's queue in Redis and tells it; it gets the lock after the
 * signaller releases it and after those queued in Redis before the signal. Threads of the signaller's own client
 * that wait for the lock are not in that queue (a client's threads wait for a lock another of its threads holds in
 * that client), and a signalled waiter goes before them, even those that asked before the signal. {@link #signalAll()} moves every waiter, in the
 * order they joined. One round trip either way.
 *
 * <p><b>Spurious wake-ups</b> may happen, as {@link Condition} allows: an await may return although nobody
 * signalled, when its wait-set entry lapsed (the thread was paused longer than a lease) or Redis lost the wait set
 * (restart without persistence, failover). Await in a loop that checks what you wait for.
 *
 * <p><b>Faults.</b> A signal message lost to a reconnect is made up for when the client's channel is subscribed
 * again, and at the next refresh of the entry (lease/3) at the latest; the waiter may then have lost its place in
 * the lock's queue, never the signal. Once the thread has sent its join, a signal may pick it, so await does not
 * end without either taking the lock back, the signal (if one came) taken, or leaving the wait set unsignalled: a
 * join or release whose reply is lost or late (it may have run) is sent again until Redis answers, and the wait
 * goes on; Redis being unavailable is waited out, as the re-acquisition does. If Redis no longer had the lock at the
 * join or the release, the thread leaves the wait set and await throws {@link LeaseLostException}, the lock not held;
 * had a signal picked it first, it takes the lock back and returns instead. A closed client ends its awaits with
 * {@link IllegalStateException}; its entries lapse after a lease.
 *
 * <p><b>Threads and handles.</b> Not thread-bound beyond what {@link Condition} says: await blocks its thread; virtual
 * threads wait without pinning a carrier. A lock held through a handle of {@link RelockLock#acquireAsync()} or
 * {@link RelockLock#tryAcquireAsync} has no current thread to await with: {@link #awaitAsync(LockHandle, Duration)}
 * awaits for the handle, without a thread, with the same promises. Both are one implementation: the blocking awaits
 * wait for it in their thread. On one Redis (standalone, Sentinel, Cluster); a Redlock client refuses conditions.
 */
public interface RelockCondition extends Condition {

    /** The name of the condition {@link RelockLock#newCondition()} returns. */
    String DEFAULT_NAME = "default";

    /** The condition's name. */
    String name();

    /** The name of the lock it belongs to. */
    String lockName();

    /**
     * The owners ({@code <client id>:<thread id>}) waiting in this condition now, longest waiting first, as Redis
     * has them. One round trip; for operators' tools.
     */
    List<String> waiters();

    /**
     * As {@link Condition#await(long, TimeUnit)}.
     *
     * @throws IllegalMonitorStateException if the current thread does not hold the write lock
     * @throws LeaseLostException if Redis no longer had the lock when the thread joined the wait set or released
     *     the lock, and no signal had picked it
     */
    @Override
    boolean await(long time, TimeUnit unit) throws InterruptedException;

    /**
     * Awaits this condition for the lock held through {@code held}, as {@link #await(long, TimeUnit)} does for a
     * thread, without one: returns at once, and no thread waits meanwhile. It joins the wait set while the handle
     * holds the lock, gives the hold up, waits for a signal or the timeout, then takes the lock again for the same
     * owner, in the lock's fair queue, as a fresh acquisition with a greater fencing token: the stage completes once
     * the handle holds it again ({@link LockHandle#isValid()}, a new {@link LockHandle#fencingToken()}). The faults are
     * handled as for a thread (see the class comment); a signal that picked this await is always honoured or, when
     * nobody takes the lock back any more, passed on to the next waiter.
     *
     * <p>While it waits the handle holds nothing ({@link LockHandle#state()} is {@code RELEASED});
     * {@link LockHandle#extendLease} and {@link LockHandle#releaseAfter} throw {@link IllegalStateException}, and
     * {@link LockHandle#whenLost()} is completed by the loss of whichever hold the handle has. Closing the handle
     * cancels the await. Cancelling the stage's {@link CompletionStage#toCompletableFuture() future} ends the wait: an
     * await cancelled before a signal picked it leaves the wait set, takes nothing back and leaves the handle closed;
     * one cancelled after takes the lock back, signals the next waiter in its place and releases the lock, so no signal
     * is lost. Either way the cancelling thread does not wait.
     *
     * <p>The stage completes on one of the client's event executors (never a Lettuce I/O thread), or on the thread that
     * cancels it or closes the client: callbacks must not block there (use the {@code *Async} methods of
     * {@link CompletionStage} with an executor of your own).
     *
     * @param held a handle of this lock's write lock (the exclusive lock's, or the write half's of a read-write lock)
     *     from {@link RelockLock#acquireAsync()} or {@link RelockLock#tryAcquireAsync}, of this condition's client
     * @param timeout how long to wait for a signal at most; zero or less waits for none (the lock is still given up
     *     and taken back)
     * @return a stage that completes with true if a signal came before the time was up (or a spurious wake-up, as for
     *     {@link #await(long, TimeUnit)}), false otherwise, the handle holding the lock again either way; exceptionally
     *     with {@link LeaseLostException} if Redis no longer had the lock when the await joined the wait set or
     *     released the lock and no signal had picked it (the handle is lost then: close it), with
     *     {@link IllegalStateException} if the client is closed meanwhile, with {@link RelockException} if Redis
     *     refused a command or the lock's re-acquisition (the handle still holds the lock if the await failed before
     *     giving it up, and nothing otherwise: {@link LockHandle#state()} tells)
     * @throws NullPointerException if held or timeout is null
     * @throws IllegalArgumentException if held is not such a handle (a thread's, from {@link RelockLock#acquire()},
     *     awaits with its thread)
     * @throws IllegalStateException if the handle is closed or awaits already, or the client is closed
     * @throws LeaseLostException if the handle's lease was found lost before
     */
    CompletionStage<Boolean> awaitAsync(LockHandle held, Duration timeout);

    /**
     * As {@link #signal()}, by the holder of a handle of this lock ({@link RelockLock#acquireAsync()}), which has no
     * thread to signal with. One round trip; any thread may call it.
     *
     * @throws NullPointerException if held is null
     * @throws IllegalArgumentException if held is not a handle of this lock's write lock from this condition's client
     *     ({@link #awaitAsync} says which)
     * @throws IllegalMonitorStateException if the handle does not hold the lock now (closed, or awaiting)
     * @throws LeaseLostException if Redis no longer had the lock
     */
    void signal(LockHandle held);

    /** As {@link #signalAll()}, by the holder of a handle of this lock; see {@link #signal(LockHandle)}. */
    void signalAll(LockHandle held);
}
