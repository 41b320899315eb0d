package dev.relock.kotlin.docs

// snippet docs/async.md#kotlin-coroutines
import dev.relock.RelockClient
import dev.relock.kotlin.awaitAcquireOrNull
import dev.relock.kotlin.release
import dev.relock.kotlin.withLock
import dev.relock.kotlin.withPermits
import kotlin.time.Duration.Companion.seconds

class ReportJobs(private val client: RelockClient) {

    suspend fun export(write: suspend (fencingToken: Long) -> Unit) =
        client.lock("export").withLock { held ->      // suspends until acquired; no thread waits
            write(held.fencingToken())                // released after, also on an exception or cancellation
        }

    suspend fun exportUnlessBusy(write: suspend (fencingToken: Long) -> Unit): Boolean {
        val held = client.lock("export").awaitAcquireOrNull(2.seconds)
            ?: return false                           // not within 2 s: it left the queue
        try {
            write(held.fencingToken())
        } finally {
            held.release()                            // off this thread; in a cancelled coroutine too
        }
        return true
    }

    suspend fun <T> read(query: suspend () -> T): T =
        client.readWriteLock("report").readLock().withLock { query() }   // shared with other readers

    suspend fun <T> callPartner(call: suspend () -> T): T =
        client.semaphore("partner-api").withPermits(2) { call() }        // 2 of its permits, given back after
}
// snippet end
