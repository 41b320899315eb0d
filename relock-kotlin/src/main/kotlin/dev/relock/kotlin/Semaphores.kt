@file:JvmName("SuspendingSemaphores")

package dev.relock.kotlin

import dev.relock.PermitHandle
import dev.relock.RelockSemaphore
import kotlin.time.Duration
import kotlin.time.toJavaDuration

/**
 * Acquires [permits] of this semaphore for a new handle, suspending as long as it takes, under a renewed lease; Redis
 * trouble is retried with back-off ([RelockSemaphore.acquireAsync]). No thread waits meanwhile. Any thread may release
 * the handle ([release]); cancelling the coroutine while it waits withdraws it, and permits acquired at that moment
 * are given back.
 *
 * @throws IllegalArgumentException if permits is not positive, or more than the semaphore has
 * @throws IllegalStateException if the semaphore has no number of permits set, or the client is or gets closed
 */
public suspend fun RelockSemaphore.awaitAcquire(permits: Int = 1): PermitHandle =
    awaitAcquisition({ it }) { acquireAsync(permits) }

/**
 * Acquires [permits] of this semaphore for a new handle, suspending up to [wait]; a wait of zero or less tries once
 * ([RelockSemaphore.tryAcquireAsync]). The lease is renewed while held, or with a [lease] it is that long and not
 * renewed. Cancellation is as for [awaitAcquire].
 *
 * @return the handle, or null when the wait ended first
 * @throws IllegalArgumentException if permits or [lease] is not positive, or permits more than the semaphore has
 * @throws dev.relock.RelockException if Redis fails; no later than the wait plus the command timeout
 */
public suspend fun RelockSemaphore.awaitAcquireOrNull(
    permits: Int,
    wait: Duration,
    lease: Duration? = null,
): PermitHandle? =
    awaitAcquisition({ it.orElse(null) }) {
        if (lease == null) tryAcquireAsync(permits, wait.toJavaDuration())
        else tryAcquireAsync(permits, wait.toJavaDuration(), lease.toJavaDuration())
    }.orElse(null)

/**
 * Acquires [permits] of this semaphore ([awaitAcquire]: suspending as long as it takes), runs [action] with the handle
 * and gives them back after it, however it ends, as `Semaphore.withPermit` of kotlinx.coroutines for permits every
 * client shares. It ends as [withLock] does: a failed release after a completed action is thrown, a lease found lost
 * while the action runs cancels it and throws [dev.relock.LeaseLostException], and the release runs on
 * [kotlinx.coroutines.Dispatchers.IO].
 */
public suspend fun <T> RelockSemaphore.withPermits(permits: Int = 1, action: suspend (held: PermitHandle) -> T): T =
    holding(awaitAcquire(permits), action)
