package dev.relock;

import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

/**
 * A distributed count-down latch kept in Redis: threads of any client wait in {@link #await()} until
 * {@link #countDown()} calls from any client have brought the count set by {@link #trySetCount} to zero.
 * Waiters are woken by a message, not by polling.
 *
 * <p><b>Lifecycle.</b> A latch nobody has set, and one whose count reached zero, has count 0: {@code await()}
 * returns at once. {@link #trySetCount} arms it (again) only while its count is 0, so one latch can be used round
 * after round. Set the count before anyone waits (in the coordinator, before it starts the parties).
 *
 * <p><b>Expiry of forgotten latches.</b> A latch lives in Redis for its idle expiry after the last
 * {@code trySetCount} or {@code countDown} ({@link #DEFAULT_IDLE_EXPIRY} unless {@link #trySetCount(long, Duration)}
 * says otherwise), then Redis deletes it: a latch whose parties died is not kept forever. A latch that expires before
 * reaching zero does not count as opened: its waiters fail with {@link IllegalStateException}, never return as if it
 * had. Once at zero it stays readable at 0 for the same expiry. A waiter that could not read the latch for a long
 * time (cut off from Redis) and finds its round gone without a trace of its opening fails the same way: the round
 * expired unopened, or it opened and then expired too, or 16 later rounds opened meanwhile (the latch remembers that
 * many); it is never taken for an opening.
 *
 * <p><b>Faults.</b> Each {@code countDown()} counts once even when the Redis client sends it again after a
 * reconnect. A wake-up message lost to a reconnect is made up for by reading the latch again once the wake-up
 * subscription is back, and by a timer at the latch's expiry. Redis trouble surfaces as {@link RelockException}
 * after at most the command timeout; a waiter whose re-read fails tries again with back-off until its wait ends.
 * On Redis with replicas, a failover may lose the last count-downs as it may lose a lock (see the guarantees).
 *
 * <p>Available on one Redis (standalone, Sentinel, Cluster); a Redlock client refuses latches.
 */
public interface RelockCountDownLatch {

    /** How long a latch lives after its last change unless {@link #trySetCount(long, Duration)} says otherwise. */
    Duration DEFAULT_IDLE_EXPIRY = Duration.ofDays(1);

    /** The latch's name as given to {@link RelockClient#countDownLatch(String)}. */
    String name();

    /**
     * Sets the count if the latch's count is 0 (never set, or reached zero), with the default idle expiry.
     *
     * @return whether this call set it; false while an earlier count has not reached zero
     * @throws IllegalArgumentException if count is not positive
     */
    boolean trySetCount(long count);

    /**
     * As {@link #trySetCount(long)}, with the latch deleted once nobody set or counted it down for {@code idleExpiry}.
     *
     * @throws IllegalArgumentException if count is not positive, or idleExpiry is shorter than a millisecond
     */
    boolean trySetCount(long count, Duration idleExpiry);

    /**
     * Counts down by one; when the count reaches zero every waiter of every client is woken. Does nothing at zero.
     *
     * @return the count left: 0 if the latch opened now, or was open (or never set) already
     */
    long countDown();

    /** The count now; 0 for a latch never set, opened, or expired. One round trip. */
    long getCount();

    /**
     * Waits until the count is zero. Returns at once if it is zero now.
     *
     * @throws InterruptedException if interrupted while waiting
     * @throws IllegalStateException if the latch expired or was deleted before reaching zero, or the client closed
     */
    void await() throws InterruptedException;

    /**
     * Waits until the count is zero or {@code timeout} has passed; a timeout of zero or less only reads the count.
     *
     * @return true if the count reached zero, false if the time was up first
     * @throws InterruptedException if interrupted while waiting
     * @throws IllegalStateException if the latch expired or was deleted before reaching zero, or the client closed
     */
    boolean await(long timeout, TimeUnit unit) throws InterruptedException;

    /** As {@link #await(long, TimeUnit)}. */
    boolean await(Duration timeout) throws InterruptedException;

    /**
     * Waits as {@link #await(Duration)} does, without a thread: returns at once, and no thread waits meanwhile (the
     * latch's wake-up message, a timer at its expiry or at the timeout moves the wait on). The blocking awaits wait for
     * the same machinery in the caller's thread.
     *
     * <p>The stage completes on one of the client's event executors (never a Lettuce I/O thread), on the thread that
     * cancels it or closes the client, or on the calling thread when the outcome is known at once: callbacks must not
     * block there (use the {@code *Async} methods of {@link CompletionStage} with an executor of your own).
     * Cancelling its {@link CompletionStage#toCompletableFuture() future} ends the wait (it leaves the client's waits
     * and its timers) without blocking the cancelling thread.
     *
     * @param timeout how long to wait at most; zero or less only reads the count
     * @return a stage that completes with true when the count reached zero, false when the time was up first;
     *     exceptionally with {@link IllegalStateException} if the latch expired or was deleted before reaching zero
     *     or the client is closed meanwhile, with {@link RelockException} if the first read of the latch failed (Redis
     *     trouble after it is retried with back-off until the wait ends)
     * @throws NullPointerException if timeout is null
     * @throws IllegalStateException if the client is closed
     */
    CompletionStage<Boolean> awaitAsync(Duration timeout);

    /**
     * What Redis holds for this latch now, for operators' tools: its count, when it expires unless changed, and
     * which clients have threads waiting in it.
     */
    LatchInfo inspect();
}
