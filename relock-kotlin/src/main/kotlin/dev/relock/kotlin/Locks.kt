@file:JvmName("SuspendingLocks")

package dev.relock.kotlin

import dev.relock.LockHandle
import dev.relock.RelockLock
import kotlin.time.Duration
import kotlin.time.toJavaDuration

/**
 * Acquires this lock for a new handle, suspending as long as it takes, with a lease renewed while held; Redis trouble
 * is retried with back-off ([RelockLock.acquireAsync]). No thread waits meanwhile.
 *
 * The hold belongs to the returned handle, not to a thread: the coroutine may resume anywhere, and any thread may
 * release it ([release], or [LockHandle.close]). It is not reentrant: acquiring a lock this coroutine already holds
 * (through a handle or a thread) waits for that hold like any other owner, forever if it is this coroutine's. The
 * read and write halves of [dev.relock.RelockReadWriteLock] are locks too: `readWriteLock.readLock().awaitAcquire()`
 * takes a shared hold.
 *
 * Cancelling the coroutine while it waits takes it out of the lock's queue; a hold acquired at that moment is
 * released, so a cancelled caller holds nothing.
 *
 * @throws IllegalStateException if the client is or gets closed
 */
public suspend fun RelockLock.awaitAcquire(): LockHandle = awaitAcquisition({ it }) { acquireAsync() }

/**
 * Acquires this lock for a new handle, suspending up to [wait]; a wait of zero or less tries once
 * ([RelockLock.tryAcquireAsync]). The lease is renewed while held, or with a [lease] it is that long and not renewed.
 * Cancellation is as for [awaitAcquire].
 *
 * @return the handle, or null when the wait ended first (the waiter has left the queue then)
 * @throws IllegalArgumentException if [lease] is not positive
 * @throws dev.relock.RelockException if Redis fails; no later than the wait plus the command timeout
 * @throws IllegalStateException if the client is or gets closed
 */
public suspend fun RelockLock.awaitAcquireOrNull(wait: Duration, lease: Duration? = null): LockHandle? =
    awaitAcquisition({ it.orElse(null) }) {
        if (lease == null) tryAcquireAsync(wait.toJavaDuration())
        else tryAcquireAsync(wait.toJavaDuration(), lease.toJavaDuration())
    }.orElse(null)

/**
 * Acquires this lock ([awaitAcquire]: suspending as long as it takes), runs [action] with the handle and releases the
 * lock after it, however it ends: as `Mutex.withLock` of kotlinx.coroutines, for a lock every client shares. Pass the
 * handle's [LockHandle.fencingToken] to what you write.
 *
 * - When the action completes, the lock is released, then its result returned. A failed release is thrown instead
 *   ([dev.relock.LeaseLostException]: the lease was lost meanwhile; [dev.relock.RelockException]: Redis could not be
 *   reached, and the lease runs out on its own): the work ran, but maybe without the exclusion it asked for.
 * - When the action throws, or the coroutine is cancelled, while waiting or while holding, the lock is released (or the
 *   wait withdrawn) and that exception thrown; a failed release is added to it as suppressed.
 * - When the lease is found lost while the action runs (it ran out, Redis lost the key, an operator forced the lock
 *   open), the action is cancelled and [dev.relock.LeaseLostException] thrown.
 *
 * The release, a round trip, runs on [kotlinx.coroutines.Dispatchers.IO]; the action runs in the caller's context.
 * Not reentrant (see [awaitAcquire]): a `withLock` on the same lock inside the action waits for itself forever.
 */
public suspend fun <T> RelockLock.withLock(action: suspend (held: LockHandle) -> T): T =
    holding(awaitAcquire(), action)
