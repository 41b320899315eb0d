package dev.relock.kotlin.docs

import dev.relock.kotlin.OneServerTestBase
import java.util.concurrent.atomic.AtomicBoolean
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.runBlocking
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.Tag
import org.junit.jupiter.api.Test

/**
 * The second Kotlin block of docs/async.md runs: it is, line for line, the marked region of [OrderWaits.kt][OrderWaits]
 * (DocSnippetsTest holds the two together), and [theExampleRuns] runs it against the fixture's server.
 */
@Tag("redis")
class WaitsDocTest : OneServerTestBase() {

    @Test
    fun theExampleRuns() = runBlocking<Unit> {
        val consumer = OrderWaits(newClient())
        val payments = OrderWaits(newClient())
        val observer = newClient()
        val paid = AtomicBoolean()
        val shipped = AtomicBoolean()
        val shipping = async(Dispatchers.Default) { consumer.shipWhenPaid(42, paid::get) { shipped.set(true) } }
        eventually("the consumer awaits") { observer.lock("order:42").newCondition("paid").waiters().size == 1 }
        payments.markPaid(42) { paid.set(true) }
        assertThat(shipping.await()).`as`("shipped").isTrue()
        assertThat(shipped.get()).isTrue()

        observer.countDownLatch("nightly:ready").trySetCount(1)
        val ready = async(Dispatchers.Default) { consumer.allReady() }
        eventually("the wait read the latch") {
            observer.countDownLatch("nightly:ready").inspect().waitingClients().isNotEmpty()
        }
        observer.countDownLatch("nightly:ready").countDown()
        assertThat(ready.await()).isTrue()
    }
}
