package dev.relock.kotlin

import dev.relock.LeaseLostException
import dev.relock.LockHandle
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicInteger
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.joinAll
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeoutOrNull
import org.assertj.core.api.Assertions.assertThat
import org.assertj.core.api.Assertions.assertThatThrownBy
import org.assertj.core.api.Assertions.fail
import org.junit.jupiter.api.Tag
import org.junit.jupiter.api.Test

/** The suspending functions of [dev.relock.RelockLock] ([awaitAcquire], [awaitAcquireOrNull], [withLock], [release]). */
@Tag("redis")
class SuspendingLockTest : OneServerTestBase() {

    @Test
    fun withLockExcludesCoroutinesOfTwoClients() = runBlocking<Unit> {
        val rounds = 25
        val counter = GuardedCounter()
        val locks = listOf(newClient().lock("counter"), newClient().lock("counter"))
        // two coroutines of each client, so handles of one client exclude each other too
        (locks + locks).map { lock ->
            launch(Dispatchers.Default) {
                repeat(rounds) { lock.withLock { counter.increment() } }
            }
        }.joinAll()
        assertThat(counter.overlaps).`as`("times two coroutines were inside").isZero()
        assertThat(counter.count).`as`("increments, none lost").isEqualTo(4 * rounds)
    }

    @Test
    fun withLockGivesTheActionTheHandleAndReturnsItsResultAfterTheRelease() = runBlocking<Unit> {
        val observer = newClient()
        val (token, heldInside) = newClient().lock("report").withLock { held ->
            held.fencingToken() to observer.inspect("report").isHeld
        }
        assertThat(heldInside).`as`("held in Redis while the action ran").isTrue()
        assertThat(token).`as`("the action's fencing token").isPositive()
        assertThat(observer.inspect("report").isHeld).`as`("held after withLock returned").isFalse()
    }

    @Test
    fun aCoroutineCancelledWhileWaitingHoldsNothingAndLeavesTheQueue() =
        givenUpWhileHeldElsewhere("job") { waiting, observer ->
            val job = launch(Dispatchers.Default) {
                waiting.withLock { fail<Unit>("a cancelled coroutine ran its action") }
            }
            eventually("the waiter queued") { observer.inspect("job").waiters() == 1 }
            job.cancelAndJoin()
        }

    @Test
    fun awaitAcquireOrNullIsNullWhenTheWaitEndsAndLeavesTheQueue() =
        givenUpWhileHeldElsewhere("batch") { waiting, _ ->
            assertThat(waiting.awaitAcquireOrNull(200.milliseconds)).`as`("what a 200 ms wait returned").isNull()
        }

    @Test
    fun awaitAcquireOrNullTakesAFreeLockWithTheLeaseAskedFor() = runBlocking<Unit> {
        val client = newClient()
        val held = client.lock("nightly").awaitAcquireOrNull(0.seconds, lease = 2.seconds)
        assertThat(held).`as`("a free lock, tried once").isNotNull()
        val hold = client.heldLocks().single()
        assertThat(hold.renewed()).`as`("an explicit lease is renewed").isFalse()
        assertThat(hold.remainingLease()).isPositive().isLessThanOrEqualTo(java.time.Duration.ofSeconds(2))
        held!!.release()
        assertThat(held.isValid).`as`("the handle after release()").isFalse()
    }

    @Test
    fun anExceptionFromTheActionReleasesTheLockAndIsThrown() = runBlocking<Unit> {
        val lock = newClient().lock("failing")
        val thrown = runCatching { lock.withLock { throw IllegalStateException("boom") } }.exceptionOrNull()
        // kotlinx.coroutines may hand back a copy of the exception, with this stack
        assertThat(thrown).`as`("what withLock threw").isInstanceOf(IllegalStateException::class.java).hasMessage("boom")
        assertThat(thrown!!.suppressed).`as`("release failures added to it").isEmpty()
        val other = newClient().lock("failing")
        assertThat(other.tryLock()).`as`("another client, after the failed action").isTrue()
        other.unlock()
    }

    @Test
    fun aCoroutineCancelledWhileHoldingReleases() = runBlocking<Unit> {
        val observer = newClient()
        val entered = CompletableDeferred<Unit>()
        val job = launch(Dispatchers.Default) {
            newClient().lock("held").withLock {
                entered.complete(Unit)
                awaitCancellation()
            }
        }
        entered.await()
        assertThat(observer.inspect("held").isHeld).`as`("held while the action runs").isTrue()
        job.cancelAndJoin()
        assertThat(observer.inspect("held").isHeld).`as`("held after the cancelled withLock ended").isFalse()
    }

    @Test
    fun releaseInTheFinallyOfACancelledCoroutineReleases() = runBlocking<Unit> {
        val observer = newClient()
        val entered = CompletableDeferred<Unit>()
        val released = AtomicBoolean()
        val job = launch(Dispatchers.Default) {
            val held = newClient().lock("manual").awaitAcquire()
            try {
                entered.complete(Unit)
                awaitCancellation()
            } finally {
                held.release()
                released.set(true)   // not reached if release() threw at once in the cancelled coroutine
            }
        }
        entered.await()
        job.cancelAndJoin()
        assertThat(released).`as`("release() returned in the cancelled coroutine").isTrue()
        assertThat(observer.inspect("manual").isHeld).`as`("held after release()").isFalse()
    }

    @Test
    fun aLeaseLostWhileTheActionRunsCancelsItAndThrowsLeaseLost() = runBlocking<Unit> {
        // a short lease: the client finds a forced unlock at its next renewal, a third of it later
        val lock = newClient { defaultLease(java.time.Duration.ofSeconds(1)) }.lock("lost")
        val entered = CompletableDeferred<Unit>()
        val actionCancelled = AtomicBoolean()
        val outcome = async(Dispatchers.Default) {
            runCatching {
                lock.withLock {
                    entered.complete(Unit)
                    try {
                        awaitCancellation()
                    } finally {
                        actionCancelled.set(true)
                    }
                }
            }
        }
        entered.await()
        assertThat(newClient().lock("lost").forceUnlock()).`as`("an operator forced the lock open").isTrue()
        val thrown = outcome.await().exceptionOrNull()
        assertThat(thrown).isInstanceOf(LeaseLostException::class.java)
            .hasMessageContaining("lease of lock 'lost' was lost while held")
        assertThat(actionCancelled).`as`("the action was cancelled").isTrue()
    }

    @Test
    fun anActionIsNotRunOnAHoldWhoseLeaseIsAlreadyKnownLost() = runBlocking<Unit> {
        val lock = newClient { defaultLease(java.time.Duration.ofSeconds(1)) }.lock("lost-before")
        val held = lock.awaitAcquire()
        assertThat(newClient().lock("lost-before").forceUnlock()).`as`("an operator forced the lock open").isTrue()
        held.whenLost().toCompletableFuture().get(10, TimeUnit.SECONDS)   // the client found it at a renewal
        val ran = AtomicBoolean()

        val thrown = runCatching { holding(held) { ran.set(true) } }.exceptionOrNull()

        assertThat(thrown).isInstanceOf(LeaseLostException::class.java)
        assertThat(ran).`as`("an action that does not suspend ran without the lock").isFalse()
    }

    /**
     * Cancels at 0 to 2 ms after the acquisition started, around the time it completes: before it (withdrawn), as it
     * completes or while the coroutine is being resumed (the handle released here or by the core), or after it (the
     * coroutine has the handle, and keeps it). Whatever the moment, nothing is held that no coroutine has.
     */
    @Test
    fun aLockGrantedAsTheCoroutineIsCancelledIsReleased() = runBlocking<Unit> {
        val client = newClient()
        val observer = newClient()
        val lock = client.lock("race")
        val delivered = CopyOnWriteArrayList<LockHandle>()
        val canceller = Executors.newSingleThreadScheduledExecutor()
        try {
            repeat(40) { round ->
                val job = launch(Dispatchers.Default, CoroutineStart.UNDISPATCHED) { delivered += lock.awaitAcquire() }
                canceller.schedule({ job.cancel() }, round * 50L, TimeUnit.MICROSECONDS)
                job.join()
                delivered.forEach { it.release() }   // releasing again does nothing
                eventually("nothing held but what was delivered, after cancel $round") {
                    !observer.inspect("race").isHeld && client.heldLocks().isEmpty()
                }
            }
        } finally {
            canceller.shutdownNow()
        }
        assertThat(observer.inspect("race").waiters()).`as`("waiters left in the queue").isZero()
    }

    /**
     * Many coroutines wait for a lock on a dispatcher of one thread: none of them blocks it, so other work on that
     * thread goes on, and once the lock comes free they all run, one at a time.
     */
    @Test
    fun waitersSuspendWithoutBlockingTheirThread() = runBlocking<Unit> {
        val holder = newClient().lock("busy").acquire()
        val lock = newClient().lock("busy")
        val one = newDispatcher("one")
        val waiters = 200
        val started = AtomicInteger()
        val counter = GuardedCounter()
        val jobs = List(waiters) {
            launch(one) {
                started.incrementAndGet()
                lock.withLock { counter.increment() }
            }
        }
        eventually("every waiter started") { started.get() == waiters }
        // a blocked thread would never run this: null at the hang bound
        val probe = withTimeoutOrNull(HANG.toMillis()) { withContext(one) { Thread.currentThread().name } }
        // with kotlinx.coroutines' debug mode on (assertions are), a thread's name has its coroutine's appended
        assertThat(probe).`as`("other work on the waiters' thread, while they wait").startsWith("one")
        assertThat(counter.count).`as`("actions run while the lock was held elsewhere").isZero()
        holder.close()
        jobs.joinAll()
        assertThat(counter.count).`as`("actions run").isEqualTo(waiters)
        assertThat(counter.overlaps).`as`("times two actions were inside").isZero()
    }

    @Test
    fun aLeaseThatIsNotPositiveIsRefusedWithItsName() = runBlocking<Unit> {
        val lock = newClient().lock("refused")
        assertThatThrownBy { runBlocking { lock.awaitAcquireOrNull(1.seconds, lease = 0.seconds) } }
            .isInstanceOf(IllegalArgumentException::class.java)
            .hasMessageContaining("lease of lock 'refused' must be positive")
    }
}
