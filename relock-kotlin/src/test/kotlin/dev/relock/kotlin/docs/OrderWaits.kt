package dev.relock.kotlin.docs

// snippet docs/async.md#kotlin-coroutines~2
import dev.relock.RelockClient
import dev.relock.kotlin.await
import dev.relock.kotlin.awaitOpen
import dev.relock.kotlin.withLock
import kotlin.time.Duration.Companion.minutes
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.withContext

class OrderWaits(private val client: RelockClient) {

    suspend fun shipWhenPaid(order: Long, isPaid: () -> Boolean, ship: () -> Unit): Boolean {
        val lock = client.lock("order:$order")
        val paid = lock.newCondition("paid")
        return lock.withLock { held ->
            while (!isPaid()) {
                if (!paid.await(held, 5.minutes)) return@withLock false   // the lock is given up while it waits
            }
            ship()                                    // held again, with a greater fencing token
            true
        }
    }

    suspend fun markPaid(order: Long, mark: () -> Unit) {
        val lock = client.lock("order:$order")
        lock.withLock { held ->
            mark()
            withContext(Dispatchers.IO) { lock.newCondition("paid").signalAll(held) }   // one round trip
        }
    }

    suspend fun allReady(): Boolean =
        client.countDownLatch("nightly:ready").awaitOpen(10.minutes)   // no thread waits
}
// snippet end
