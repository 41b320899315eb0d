package dev.relock.kotlin

import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicInteger
import kotlin.time.Duration.Companion.milliseconds
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.joinAll
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import org.assertj.core.api.Assertions.assertThat
import org.assertj.core.api.Assertions.assertThatThrownBy
import org.assertj.core.api.Assertions.fail
import org.junit.jupiter.api.Tag
import org.junit.jupiter.api.Test

/** The suspending functions on the halves of a read-write lock, and on a semaphore's permits. */
@Tag("redis")
class SharedHoldTest : OneServerTestBase() {

    @Test
    fun readersOfTwoClientsShareAndAWriterWaitsForThem() = runBlocking<Unit> {
        val observer = newClient()
        val readersIn = AtomicInteger()
        val bothIn = CompletableDeferred<Unit>()
        val letGo = CompletableDeferred<Unit>()
        val readers = List(2) {
            val readLock = newClient().readWriteLock("doc").readLock()
            launch(Dispatchers.Default) {
                readLock.withLock {
                    // both readers inside at once: neither gets past here until the other is in too
                    if (readersIn.incrementAndGet() == 2) bothIn.complete(Unit)
                    bothIn.await()
                    letGo.await()
                }
            }
        }
        bothIn.await()
        val writerIn = AtomicBoolean()
        val writer = launch(Dispatchers.Default) {
            newClient().readWriteLock("doc").writeLock().withLock { writerIn.set(true) }
        }
        eventually("the writer queued behind the readers") { observer.inspect("doc").waiters() == 1 }
        assertThat(writerIn).`as`("the writer inside while readers hold").isFalse()
        letGo.complete(Unit)
        (readers + writer).joinAll()
        assertThat(writerIn).`as`("the writer inside after the readers left").isTrue()
    }

    @Test
    fun permitsAreHeldForTheActionAndGivenBack() = runBlocking<Unit> {
        val semaphore = newClient().semaphore("pool")
        assertThat(semaphore.trySetPermits(3)).isTrue()
        val other = newClient().semaphore("pool")
        val permitsInside = semaphore.withPermits(2) { held ->
            assertThat(held.permits()).isEqualTo(2)
            assertThat(other.awaitAcquireOrNull(2, 100.milliseconds)).`as`("2 more permits of the 1 left").isNull()
            semaphore.availablePermits()
        }
        assertThat(permitsInside).`as`("permits free while the action ran").isEqualTo(1)
        assertThat(semaphore.availablePermits()).`as`("permits free after withPermits").isEqualTo(3)
        val one = other.awaitAcquire()
        assertThat(one.permits()).`as`("awaitAcquire()'s default").isEqualTo(1)
        one.release()
        assertThat(semaphore.availablePermits()).isEqualTo(3)
    }

    @Test
    fun aCoroutineCancelledWhileWaitingForPermitsHoldsNone() = runBlocking<Unit> {
        val observer = newClient()
        val semaphore = newClient().semaphore("single")
        assertThat(semaphore.trySetPermits(1)).isTrue()
        val taken = semaphore.awaitAcquire()
        val waiter = newClient()
        val job = launch(Dispatchers.Default) {
            waiter.semaphore("single").withPermits { fail<Unit>("a cancelled coroutine ran its action") }
        }
        eventually("the waiter queued") { observer.inspectSemaphore("single").waiters() == 1 }
        job.cancelAndJoin()
        eventually("the waiter left the queue") { observer.inspectSemaphore("single").waiters() == 0 }
        taken.release()
        assertThat(waiter.heldLocks()).`as`("holds of the waiter's client").isEmpty()
        assertThat(semaphore.availablePermits()).`as`("permits free at the end").isEqualTo(1)
    }

    @Test
    fun aPermitCountThatIsNotPositiveIsRefusedWithTheSemaphoresName() = runBlocking<Unit> {
        val semaphore = newClient().semaphore("counted")
        assertThat(semaphore.trySetPermits(2)).isTrue()
        assertThatThrownBy { runBlocking { semaphore.withPermits(0) { fail<Unit>("ran without permits") } } }
            .isInstanceOf(IllegalArgumentException::class.java)
            .hasMessageContaining("permits to acquire from semaphore 'counted' must be positive: 0")
    }
}
