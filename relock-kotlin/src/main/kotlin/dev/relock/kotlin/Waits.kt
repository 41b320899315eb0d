@file:JvmName("SuspendingWaits")

package dev.relock.kotlin

import dev.relock.LockHandle
import dev.relock.RelockCondition
import dev.relock.RelockCountDownLatch
import java.util.concurrent.CompletableFuture
import java.util.concurrent.CompletionStage
import kotlin.coroutines.resume
import kotlin.coroutines.resumeWithException
import kotlin.time.Duration
import kotlin.time.toJavaDuration
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.ensureActive
import kotlinx.coroutines.suspendCancellableCoroutine
import kotlinx.coroutines.withContext
import org.slf4j.LoggerFactory

/*
 * Latch and condition waits of relock-core, awaited by a coroutine.
 *
 * A cancellation before the core's stage completes cancels the stage: the core ends the wait, and a condition's await
 * that a signal had picked passes the signal on itself. A cancellation that crosses a completion with a signal (the
 * coroutine is resumed with its cancellation, not the signal, as kotlinx.coroutines resumes a cancelled coroutine) is
 * caught in the await, which passes the signal on as the handle's holder before it rethrows: before any `finally` of
 * the caller can release the lock, so the pass-on never comes after the release.
 */

private val log = LoggerFactory.getLogger("dev.relock.kotlin")

/**
 * Waits until this latch's count reaches zero, suspending up to [timeout] ([RelockCountDownLatch.awaitAsync]); no
 * thread waits meanwhile. A timeout of zero or less only reads the count. Cancelling the coroutine ends the wait.
 *
 * @return true when the count reached zero, false when the time was up first
 * @throws IllegalStateException if the latch expired or was deleted before reaching zero, or the client is or gets
 *   closed
 * @throws dev.relock.RelockException if the first read of the latch failed
 */
public suspend fun RelockCountDownLatch.awaitOpen(timeout: Duration): Boolean =
    awaitStage(started { awaitAsync(timeout.toJavaDuration()) })

/**
 * Awaits this condition for the lock held through [held] (from [awaitAcquire] or [withLock]), suspending until a
 * signal comes or [timeout] has passed ([RelockCondition.awaitAsync]); no thread waits meanwhile. It gives the hold up
 * while it waits, and takes the lock again for the same handle before it returns, with a greater fencing token. Await
 * in a loop that checks what you wait for: wake-ups may be spurious, as for [java.util.concurrent.locks.Condition].
 *
 * Cancellation: a coroutine cancelled while it waits leaves the wait set and the handle holds nothing (its [release]
 * does nothing then); a signal that had picked it is passed on to the next waiter, also when the cancellation crosses
 * the signal, so a cancelled waiter loses no signal. Signal from a handle with [RelockCondition.signal] on
 * [Dispatchers.IO] (it blocks for a round trip).
 *
 * @return true if a signal came before the time was up, false otherwise; the handle holds the lock again either way
 * @throws IllegalArgumentException if [held] is not a handle of this condition's lock from its client (a thread's,
 *   from [dev.relock.RelockLock.acquire], awaits with its thread)
 * @throws dev.relock.LeaseLostException if Redis no longer had the lock when the await joined the wait set or
 *   released it, and no signal had picked it
 * @throws IllegalStateException if the handle is closed or awaits already, or the client is or gets closed
 */
public suspend fun RelockCondition.await(held: LockHandle, timeout: Duration): Boolean {
    val awaiting = started { awaitAsync(held, timeout.toJavaDuration()) }
    try {
        return awaitStage(awaiting)
    } catch (cancelled: CancellationException) {
        if (awaiting.isDone && !awaiting.isCompletedExceptionally && awaiting.getNow(false)) {
            // the signal came as the coroutine was cancelled: the lock is held again, and nobody acts on the signal
            withContext(NonCancellable + Dispatchers.IO) { passOn(held) }
        }
        throw cancelled
    }
}

/** Starts the stage of [call] for a coroutine not cancelled already (a wait started for one would only end again). */
private suspend fun <T> started(call: () -> CompletionStage<T>): CompletableFuture<T> {
    currentCoroutineContext().ensureActive()
    return call().toCompletableFuture()
}

/** Suspends until [stage] completes; a cancellation of the coroutine cancels it. */
private suspend fun <T> awaitStage(stage: CompletableFuture<T>): T = suspendCancellableCoroutine { waiting ->
    waiting.invokeOnCancellation { stage.cancel(false) }
    stage.whenComplete { value, failure ->
        if (failure == null) {
            waiting.resume(value)
        } else {
            // ignored when the coroutine was cancelled: that cancellation is what completed the stage
            waiting.resumeWithException(unwrapped(failure))
        }
    }
}

/** Signals the next waiter in the place of this coroutine, which holds the lock through [held]. Blocks: IO only. */
private fun RelockCondition.passOn(held: LockHandle) {
    try {
        signal(held)
    } catch (failure: RuntimeException) {
        log.warn("condition '{}' of lock '{}': a signal that reached a cancelled coroutine could not be passed on; " +
            "the next waiter may wait for another signal", name(), lockName(), failure)
    }
}
