package dev.relock.kotlin

import dev.relock.LeaseState
import dev.relock.RelockClient
import dev.relock.RelockLock
import dev.relock.testredis.RedisServer
import java.time.Duration
import java.util.concurrent.Executors
import java.util.concurrent.atomic.AtomicInteger
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.ExecutorCoroutineDispatcher
import kotlinx.coroutines.asCoroutineDispatcher
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.delay
import kotlinx.coroutines.future.await
import kotlinx.coroutines.joinAll
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeoutOrNull
import org.assertj.core.api.Assertions.assertThat
import org.assertj.core.api.Assertions.assertThatThrownBy
import org.assertj.core.api.Assertions.fail
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.BeforeAll
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInstance
import org.junit.jupiter.api.Timeout

/**
 * Kotlin coroutines over the asynchronous API: `acquireAsync().await()` suspends the coroutine, not a
 * thread, and the handle it gives is owned by itself, not by whichever thread resumed the coroutine.
 *
 * One real redis-server for the class, started by the fixture on a free loopback port. After each
 * test no lock may be held in Redis or by any client's own account, and the server is flushed.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(60)
class CoroutineLockTest {

    private lateinit var redis: RedisServer
    private val clients = mutableListOf<RelockClient>()
    private val dispatchers = mutableListOf<ExecutorCoroutineDispatcher>()

    @BeforeAll
    fun startRedis() {
        redis = RedisServer.start()
    }

    @AfterAll
    fun stopRedis() {
        if (::redis.isInitialized) redis.close()
    }

    @AfterEach
    fun checkNothingIsLeft() {
        try {
            assertThat(clients.flatMap { it.heldLocks() }).`as`("holds the clients still count").isEmpty()
            assertThat(clients.firstOrNull()?.list("*").orEmpty()).`as`("locks held in Redis").isEmpty()
        } finally {
            clients.forEach { it.close() }
            clients.clear()
            dispatchers.forEach { it.close() }
            dispatchers.clear()
            redis.flushAll()
        }
    }

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
        val count = AtomicInteger()
        val inside = AtomicInteger()
        val overlaps = AtomicInteger()
        listOf(Dispatchers.Default, newDispatcher("counter-own")).map { dispatcher ->
            launch(dispatcher) {
                repeat(rounds) {
                    lock.acquireAsync().await().use {
                        if (inside.incrementAndGet() != 1) overlaps.incrementAndGet()
                        val seen = count.get()
                        // the work suspends: without the lock the other coroutine would get in here
                        delay(1)
                        count.set(seen + 1)
                        inside.decrementAndGet()
                    }
                }
            }
        }.joinAll()
        assertThat(overlaps.get()).`as`("times both coroutines were inside").isZero()
        assertThat(count.get()).`as`("increments, none lost").isEqualTo(2 * rounds)
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

    /** A client with default settings on this class's server, closed after the test. */
    private fun newClient(): RelockClient =
        RelockClient.builder().redisUri(redis.uri()).build().also { clients += it }

    /** A dispatcher of one thread of its own, named [name], closed after the test. */
    private fun newDispatcher(name: String): ExecutorCoroutineDispatcher =
        Executors.newSingleThreadExecutor { task -> Thread(task, name) }.asCoroutineDispatcher()
            .also { dispatchers += it }

    /**
     * Runs [giveUp] with the lock [name] of a waiting client (and a third client to look on) while a client
     * of its own holds it; then checks that the waiter gave its acquisition up: it left the queue, and once
     * the holder released, the lock comes free, the waiter's client counts no hold and the third client takes
     * it. A withdrawal that crossed an attempt still in flight may take the lock for an instant and release
     * it at once; a hold left behind would be renewed and stay.
     */
    private fun givenUpWhileHeldElsewhere(
        name: String,
        giveUp: suspend CoroutineScope.(waiting: RelockLock, observer: RelockClient) -> Unit,
    ) = runBlocking<Unit> {
        val held = newClient().lock(name).acquire()
        val waiter = newClient()
        val observer = newClient()
        giveUp(waiter.lock(name), observer)
        eventually("the waiter left the queue of '$name'") { observer.inspect(name).waiters() == 0 }
        held.close()
        eventually("'$name' free after the holder released") { !observer.inspect(name).isHeld }
        assertThat(waiter.heldLocks()).`as`("holds of the waiter's client").isEmpty()
        val next = observer.lock(name)
        assertThat(next.tryLock()).`as`("another client after the release").isTrue()
        next.unlock()
    }

    /** Polls [condition] until it holds: a wait for an outcome, never a pause in place of one. */
    private suspend fun eventually(what: String, condition: () -> Boolean) {
        withTimeoutOrNull(HANG.toMillis()) {
            while (!condition()) delay(5)
        } ?: fail<Unit>("not within $HANG: $what")
    }

    private companion object {
        /** A bound that only a hang exceeds; never a performance goal. */
        val HANG: Duration = Duration.ofSeconds(10)
    }
}
