package dev.relock.kotlin

import dev.relock.LeaseState
import java.time.Duration
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.future.await
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

/**
 * Kotlin coroutines over relock-core's asynchronous API as it is, awaited with kotlinx.coroutines' own
 * `CompletionStage.await()`: what this module's extensions are built on, and what a user who awaits the stages
 * directly gets. `acquireAsync().await()` suspends the coroutine, not a thread, and the handle it gives is owned by
 * itself, not by whichever thread resumed the coroutine.
 */
@Tag("redis")
class CoroutineLockTest : OneServerTestBase() {

    @Test
    fun anAwaitedHandleHoldsTheLockInsideUseAndFreesItAfter() = runBlocking<Unit> {
        val client = newClient()
        val other = newClient()
        val token = client.lock("report").acquireAsync().await().use { held ->
            assertThat(held.isValid).isTrue()
            assertThat(other.lock("report").tryLock()).`as`("another client, inside use { }").isFalse()
            held.fencingToken()
        }
        assertThat(token).isPositive()
        val after = other.lock("report")
        assertThat(after.tryLock()).`as`("another client, after use { }").isTrue()
        after.unlock()
    }

    @Test
    fun coroutinesOnTwoDispatchersNeverOverlapInsideTheLock() = runBlocking<Unit> {
        // one client for both, as an application has: handles of one client exclude each other too
        val lock = newClient().lock("counter")
        val rounds = 50
        val counter = GuardedCounter()
        listOf(Dispatchers.Default, newDispatcher("counter-own")).map { dispatcher ->
            launch(dispatcher) {
                repeat(rounds) {
                    lock.acquireAsync().await().use { counter.increment() }
                }
            }
        }.joinAll()
        assertThat(counter.overlaps).`as`("times both coroutines were inside").isZero()
        assertThat(counter.count).`as`("increments, none lost").isEqualTo(2 * rounds)
    }

    @Test
    fun aCoroutineCancelledWhileQueuedWithdrawsAndLeavesTheLockFree() =
        givenUpWhileHeldElsewhere("job") { waiting, observer ->
            val acquiring = waiting.acquireAsync()
            val job = launch(Dispatchers.Default) {
                acquiring.await().use { fail<Unit>("a cancelled coroutine got the lock") }
            }
            eventually("the waiter queued") { observer.inspect("job").waiters() == 1 }
            job.cancelAndJoin()
            assertThat(acquiring.toCompletableFuture()).`as`("await() cancels the future it waited on").isCancelled()
        }

    @Test
    fun withTimeoutOrNullEndsTheWaitAndLeavesNoHoldBehind() = givenUpWhileHeldElsewhere("batch") { waiting, _ ->
        val got = withTimeoutOrNull(200) { waiting.acquireAsync().await() }
        assertThat(got).`as`("what the timed-out wait returned").isNull()
    }

    @Test
    fun tryAcquireAsyncAwaitsEmptyWhileTheLockIsHeldElsewhere() = runBlocking<Unit> {
        val holder = newClient()
        val other = newClient()
        holder.lock("slot").acquire().use {
            val start = System.nanoTime()
            val got = other.lock("slot").tryAcquireAsync(Duration.ofMillis(100)).await()
            assertThat(got).`as`("a 100 ms wait while held elsewhere").isEmpty()
            assertThat(Duration.ofNanos(System.nanoTime() - start)).`as`("how long it waited")
                .isGreaterThanOrEqualTo(Duration.ofMillis(100))
            eventually("the ended wait left the queue") { holder.inspect("slot").waiters() == 0 }
        }
    }

    @Test
    fun aHandleAcquiredOnOneThreadIsClosedOnAnother() = runBlocking<Unit> {
        val lock = newClient().lock("handoff")
        val observer = newClient()
        val acquirer = newDispatcher("acquirer")
        val closer = newDispatcher("closer")
        val (handle, acquiredOn) = withContext(acquirer) { lock.acquireAsync().await() to Thread.currentThread() }
        val closedOn = withContext(closer) {
            handle.close()
            Thread.currentThread()
        }
        assertThat(closedOn).isNotSameAs(acquiredOn)
        assertThat(handle.state()).isEqualTo(LeaseState.RELEASED)
        assertThat(observer.inspect("handoff").holders()).`as`("holders after the close").isEmpty()

        // what a coroutine resumed on another thread meets with a hold owned by a thread
        withContext(acquirer) { lock.lock() }
        withContext(closer) {
            assertThatThrownBy { lock.unlock() }.isInstanceOf(IllegalMonitorStateException::class.java)
        }
        withContext(acquirer) { lock.unlock() }
    }
}
