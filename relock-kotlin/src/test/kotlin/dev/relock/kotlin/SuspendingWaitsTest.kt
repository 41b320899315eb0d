package dev.relock.kotlin

import dev.relock.LockHandle
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.Tag
import org.junit.jupiter.api.Test

/** The suspending waits: [awaitOpen] of a latch, and [await] of a condition for a handle's hold. */
@Tag("redis")
class SuspendingWaitsTest : OneServerTestBase() {

    @Test
    fun awaitOpenSuspendsWithoutBlockingItsThreadUntilTheCountReachesZero() = runBlocking<Unit> {
        val latch = newClient().countDownLatch("ready")
        latch.trySetCount(1)
        val one = newDispatcher("one-thread")
        val waiters = (1..100).map { async(one) { latch.awaitOpen(30.seconds) } }
        eventually("the waits read the latch") { latch.inspect().waitingClients().isNotEmpty() }
        // the dispatcher's one thread is free while 100 coroutines wait on it
        assertThat(withContext(one) { "free" }).isEqualTo("free")
        newClient().countDownLatch("ready").countDown()
        assertThat(waiters.map { it.await() }).containsOnly(true)
        latch.trySetCount(1)
        assertThat(latch.awaitOpen(100.milliseconds)).`as`("a wait whose time ran out").isFalse()
        newClient().countDownLatch("ready").countDown()
    }

    @Test
    fun aCancelledLatchWaitEnds() = runBlocking<Unit> {
        val latch = newClient().countDownLatch("never")
        latch.trySetCount(1)
        val waiting = launch(Dispatchers.Default) { latch.awaitOpen(60.seconds) }
        eventually("the wait read the latch") { latch.inspect().waitingClients().isNotEmpty() }
        withTimeout(HANG.toMillis()) { waiting.cancelAndJoin() }
        assertThat(waiting.isCancelled).isTrue()
        latch.countDown()
    }

    @Test
    fun aSignalReachesASuspendedAwaitWhoseHandleHoldsTheLockAgain() = runBlocking<Unit> {
        val lock = newClient().lock("order")
        val paid = lock.newCondition("paid")
        val result = async(Dispatchers.Default) {
            lock.withLock { held ->
                val before = held.fencingToken()
                val signalled = paid.await(held, 30.seconds)
                Triple(signalled, held.isValid, held.fencingToken() > before)
            }
        }
        eventually("the await joined") { paid.waiters().size == 1 }
        signalAsAnotherClient("order", "paid")
        assertThat(result.await()).isEqualTo(Triple(true, true, true))
    }

    @Test
    fun anAwaitWhoseTimeRunsOutIsFalseWithTheLockHeldAgain() = runBlocking<Unit> {
        val client = newClient()
        val observer = newClient()
        val (signalled, heldAgain) = client.lock("order").withLock { held ->
            client.lock("order").newCondition().await(held, 100.milliseconds) to observer.inspect("order").isHeld
        }
        assertThat(signalled).isFalse()
        assertThat(heldAgain).`as`("held in Redis after the await").isTrue()
    }

    @Test
    fun aCoroutineCancelledWhileItAwaitsPassesTheSignalItTookOn() = runBlocking<Unit> {
        val lock = newClient().lock("queue")
        val notEmpty = lock.newCondition()
        val first = launch(Dispatchers.Default) { lock.withLock { held -> notEmpty.await(held, 60.seconds) } }
        eventually("the first joined") { notEmpty.waiters().size == 1 }
        val secondLock = newClient().lock("queue")
        val second = async(Dispatchers.Default) {
            secondLock.withLock { held -> secondLock.newCondition().await(held, 60.seconds) }
        }
        eventually("the second joined") { notEmpty.waiters().size == 2 }
        val signaller = newClient().lock("queue")
        val signalling = signaller.awaitAcquire()
        withContext(Dispatchers.IO) { signaller.newCondition().signal(signalling) } // picks the first
        first.cancelAndJoin()
        signalling.release()
        assertThat(withTimeout(HANG.toMillis()) { second.await() }).`as`("the second was signalled").isTrue()
    }

    /**
     * The cancellation crosses the signal: the stage has completed with it, and the coroutine, cancelled before it
     * could resume, gets its cancellation instead. The await passes the signal on before the coroutine's `withLock`
     * releases the lock; without that the second waiter would wait out its minute.
     */
    @Test
    fun aCancellationThatCrossesTheSignalPassesItOn() = runBlocking<Unit> {
        val lock = newClient().lock("queue")
        val notEmpty = lock.newCondition()
        val busy = newDispatcher("busy")
        val handle = CompletableDeferred<LockHandle>()
        val first = launch(busy) {
            lock.withLock { held ->
                handle.complete(held)
                notEmpty.await(held, 60.seconds)
            }
        }
        val held = handle.await()
        eventually("the first joined") { notEmpty.waiters().size == 1 }
        val secondLock = newClient().lock("queue")
        val second = async(Dispatchers.Default) {
            secondLock.withLock { mine -> secondLock.newCondition().await(mine, 60.seconds) }
        }
        eventually("the second joined") { notEmpty.waiters().size == 2 }
        // the first's dispatcher is kept busy, so its coroutine cannot resume when the stage completes
        val blocked = CountDownLatch(1)
        val letGo = CountDownLatch(1)
        busy.executor.execute {
            blocked.countDown()
            letGo.await(HANG.toMillis(), TimeUnit.MILLISECONDS)
        }
        blocked.await()
        signalAsAnotherClient("queue", "default")
        eventually("the first took the lock back with the signal") { held.isValid }
        first.cancel()
        letGo.countDown()
        first.join()
        assertThat(withTimeout(HANG.toMillis()) { second.await() }).`as`("the second was signalled").isTrue()
    }

    /** A holder of another client signals [condition] of lock [name] once, from a handle, and releases. */
    private suspend fun signalAsAnotherClient(name: String, condition: String) {
        val lock = newClient().lock(name)
        val held = lock.awaitAcquire()
        try {
            withContext(Dispatchers.IO) { lock.newCondition(condition).signal(held) }
        } finally {
            held.release()
        }
    }
}
