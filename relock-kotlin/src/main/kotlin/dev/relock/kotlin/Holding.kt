@file:JvmName("SuspendingHandles")

package dev.relock.kotlin

import dev.relock.LeaseLost
import dev.relock.LeaseLostException
import dev.relock.LockHandle
import kotlin.coroutines.resume
import kotlin.coroutines.suspendCoroutine
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.asExecutor
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.ensureActive
import kotlinx.coroutines.launch
import kotlinx.coroutines.suspendCancellableCoroutine

/**
 * Gives up this hold, as [LockHandle.close] does, without blocking the caller's thread: the close, a round trip to
 * Redis, runs on [Dispatchers.IO]. It is not cancellable: in a `finally` block of a cancelled coroutine it releases
 * and returns as anywhere else. Releasing a released handle does nothing.
 *
 * @throws LeaseLostException if the lease was lost before the hold was given up
 * @throws dev.relock.RelockException if Redis could not be reached; the lease then runs out on its own
 */
public suspend fun LockHandle.release() {
    closeOffThread(this)?.let { throw it }
}

/**
 * Runs [action] with [held] and gives the hold up after it, however it ends.
 *
 * - The action completes: the hold is released, then its result returned; a failed release (a lease found lost, Redis
 *   unreachable) is thrown instead, since the action may have run without the exclusion it asked for.
 * - The action fails, or the caller is cancelled: the hold is released, then that exception thrown, with a failed
 *   release's exception added as suppressed (not when both are the same lost lease).
 * - The lease is found lost while the action runs: the action is cancelled and [LeaseLostException] thrown, so the work
 *   does not go on unprotected.
 */
internal suspend fun <H : LockHandle, T> holding(held: H, action: suspend (H) -> T): T {
    val result = try {
        coroutineScope {
            // fails this scope, and so cancels the action, when the lease is lost; cancelled when the action ends
            val loss = launch(start = CoroutineStart.UNDISPATCHED) {
                val lost = lossOf(held)
                throw LeaseLostException(lost.lockName(), lost.reason())
            }
            try {
                ensureActive()   // a lease already known lost failed this scope above: the action must not start
                action(held)
            } finally {
                loss.cancel()
            }
        }
    } catch (failure: Throwable) {
        releaseAfter(held, failure)
        throw failure
    }
    held.release()
    return result
}

/**
 * Suspends until the hold's lease is found lost; never resumes if it is released first. Cancelling the wait leaves
 * [LockHandle.whenLost] as it is (it is the hold's, and may be awaited elsewhere).
 */
private suspend fun lossOf(held: LockHandle): LeaseLost = suspendCancellableCoroutine { waiting ->
    // a resume after the wait was cancelled is ignored
    held.whenLost().thenAccept { lost -> waiting.resume(lost) }
}

/** Releases after the action failed with [failure], adding a release's own failure to it. */
private suspend fun releaseAfter(held: LockHandle, failure: Throwable) {
    val releaseFailure = closeOffThread(held)
    if (releaseFailure != null && !(failure is LeaseLostException && releaseFailure is LeaseLostException)) {
        failure.addSuppressed(releaseFailure)
    }
}

/**
 * Closes [held] on [Dispatchers.IO] and returns what the close threw, or null. Suspends without a cancellation
 * check at either end (unlike `withContext`, which throws in a cancelled caller after its block ran), so that the
 * caller always learns how the release went.
 */
private suspend fun closeOffThread(held: LockHandle): Throwable? = suspendCoroutine { closed ->
    Dispatchers.IO.asExecutor().execute {
        closed.resume(runCatching { held.close() }.exceptionOrNull())
    }
}
