package dev.relock.kotlin

import dev.relock.LeaseLostException
import dev.relock.LockHandle
import java.util.concurrent.CompletionException
import java.util.concurrent.CompletionStage
import kotlin.coroutines.resumeWithException
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.asExecutor
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.ensureActive
import kotlinx.coroutines.suspendCancellableCoroutine
import org.slf4j.LoggerFactory

/*
 * One asynchronous acquisition of relock-core, awaited by a coroutine.
 *
 * Who owns a handle: the core's future completes with it once. Then exactly one of two things happens, decided by
 * kotlinx.coroutines' resume-with-onCancellation: the coroutine resumes with it (from then on it is the caller's),
 * or the coroutine was cancelled before it could resume (already cancelled at the completion, or cancelled while the
 * resumption was being dispatched) and onCancellation releases it here. A cancellation before the completion cancels
 * the core's future instead, which withdraws the waiter from the lock's queue; a hold the core acquires at that
 * moment is released by the core. So a cancelled caller never holds anything.
 *
 * Threads: the completion comes from a Lettuce event-executor thread (or the calling thread when the outcome is known
 * at once), where nothing may block; a handle nobody claimed is released on Dispatchers.IO, because close() blocks
 * for a round trip.
 */

private val log = LoggerFactory.getLogger("dev.relock.kotlin")

/**
 * Starts the acquisition [start] and suspends until its stage completes; returns what it completed with.
 * [handleIn] finds the handle in that result (null for "not acquired"), to release it if nobody can take it.
 */
internal suspend fun <R> awaitAcquisition(handleIn: (R) -> LockHandle?, start: () -> CompletionStage<R>): R {
    // an acquisition started for a coroutine cancelled already would only be withdrawn again
    currentCoroutineContext().ensureActive()
    val acquisition = start().toCompletableFuture()
    return suspendCancellableCoroutine { waiting ->
        waiting.invokeOnCancellation { acquisition.cancel(false) }
        acquisition.whenComplete { result, failure ->
            if (failure == null) {
                waiting.resume(result) { _, unclaimed, _ -> handleIn(unclaimed)?.let(::releaseUnclaimed) }
            } else {
                // ignored when the coroutine was cancelled: that cancellation is what completed the future
                waiting.resumeWithException(unwrapped(failure))
            }
        }
    }
}

/** The failure itself, not the CompletionException a dependent stage wraps it in. */
internal fun unwrapped(failure: Throwable): Throwable =
    if (failure is CompletionException && failure.cause != null) failure.cause!! else failure

/**
 * Releases a handle that no caller took, off the completing thread. There is nobody to tell of a failure: a lost
 * lease was reported by the client already; anything else is logged, and the lease runs out on its own.
 */
private fun releaseUnclaimed(handle: LockHandle) {
    Dispatchers.IO.asExecutor().execute {
        try {
            handle.close()
        } catch (lost: LeaseLostException) {
            log.debug("lock '{}' released after its coroutine was cancelled: its lease had been lost", handle.name())
        } catch (failure: RuntimeException) {
            log.warn("lock '${handle.name()}' could not be released after its coroutine was cancelled; " +
                "its lease runs out on its own", failure)
        }
    }
}
