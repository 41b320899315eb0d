package dev.relock.kotlin

import dev.relock.RelockClient
import dev.relock.RelockClientBuilder
import dev.relock.RelockLock
import dev.relock.testredis.RedisServer
import java.time.Duration
import java.util.concurrent.Executors
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.ExecutorCoroutineDispatcher
import kotlinx.coroutines.asCoroutineDispatcher
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeoutOrNull
import org.assertj.core.api.Assertions.assertThat
import org.assertj.core.api.Assertions.fail
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.BeforeAll
import org.junit.jupiter.api.TestInstance
import org.junit.jupiter.api.Timeout

/**
 * One real redis-server for the test class, started by the fixture on a free loopback port, and the clients and
 * dispatchers a test makes on it. After each test no lock or permit may be held or waited for in Redis, nor held by
 * any client's own account; then the clients and dispatchers are closed and the server flushed.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(60)
abstract class OneServerTestBase {

    protected lateinit var redis: RedisServer
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
            assertThat(clients.firstOrNull()?.list("*").orEmpty().filter { it.isHeld || it.waiters() > 0 })
                .`as`("locks and semaphores held or waited for in Redis").isEmpty()
        } finally {
            clients.forEach { it.close() }
            clients.clear()
            dispatchers.forEach { it.close() }
            dispatchers.clear()
            redis.flushAll()
        }
    }

    /** A client on this class's server, [configured] further if given, closed after the test. */
    protected fun newClient(configured: RelockClientBuilder.() -> Unit = {}): RelockClient =
        RelockClient.builder().redisUri(redis.uri()).apply(configured).build().also { clients += it }

    /** A dispatcher of one thread of its own, named [name], closed after the test. */
    protected fun newDispatcher(name: String): ExecutorCoroutineDispatcher =
        Executors.newSingleThreadExecutor { task -> Thread(task, name) }.asCoroutineDispatcher()
            .also { dispatchers += it }

    /**
     * Runs [giveUp] with the lock [name] of a waiting client (and a third client to look on) while a client
     * of its own holds it; then checks that the waiter gave its acquisition up: it left the queue, and once
     * the holder released, the lock comes free, the waiter's client counts no hold and the third client takes
     * it. A withdrawal that crossed an attempt still in flight may take the lock for an instant and release
     * it at once; a hold left behind would be renewed and stay.
     */
    protected fun givenUpWhileHeldElsewhere(
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
    protected suspend fun eventually(what: String, condition: () -> Boolean) {
        withTimeoutOrNull(HANG.toMillis()) {
            while (!condition()) delay(5)
        } ?: fail<Unit>("not within $HANG: $what")
    }

    protected companion object {
        /** A bound that only a hang exceeds; never a performance goal. */
        val HANG: Duration = Duration.ofSeconds(10)
    }
}
