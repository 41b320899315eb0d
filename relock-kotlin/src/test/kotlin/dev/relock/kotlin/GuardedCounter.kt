package dev.relock.kotlin

import java.util.concurrent.atomic.AtomicInteger
import kotlinx.coroutines.delay

/**
 * A counter that coroutines increment while they hold a lock, suspending between the read and the write: without
 * exclusion another coroutine gets in there and an increment is lost. [overlaps] counts the times two were inside at
 * once. Any thread may increment.
 */
class GuardedCounter {
    private val value = AtomicInteger()
    private val inside = AtomicInteger()
    private val overlapCount = AtomicInteger()

    val count: Int get() = value.get()
    val overlaps: Int get() = overlapCount.get()

    suspend fun increment() {
        if (inside.incrementAndGet() != 1) overlapCount.incrementAndGet()
        val seen = value.get()
        delay(1)
        value.set(seen + 1)
        inside.decrementAndGet()
    }
}
