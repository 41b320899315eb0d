package dev.relock.kotlin.docs

import dev.relock.LockKind
import dev.relock.kotlin.OneServerTestBase
import java.util.concurrent.CopyOnWriteArrayList
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.runBlocking
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.Tag
import org.junit.jupiter.api.Test

/**
 * The Kotlin of docs/async.md runs: its block is, line for line, the marked region of [ReportJobs.kt][ReportJobs]
 * (compiled with these tests, its imports those of the block; relock-core's DocSnippetsTest holds the two together),
 * and [theExampleRuns] runs that code against the fixture's server.
 */
@Tag("redis")
class AsyncDocTest : OneServerTestBase() {

    @Test
    fun theExampleRuns() = runBlocking<Unit> {
        val client = newClient()
        val observer = newClient()
        val jobs = ReportJobs(client)
        val tokens = CopyOnWriteArrayList<Long>()

        jobs.export { token ->
            assertThat(observer.inspect("export").isHeld).`as`("'export' held while writing").isTrue()
            tokens += token
        }
        val elsewhere = observer.lock("export").acquire()
        assertThat(jobs.exportUnlessBusy { tokens += it }).`as`("exportUnlessBusy while held elsewhere").isFalse()
        elsewhere.close()
        assertThat(jobs.exportUnlessBusy { tokens += it }).`as`("exportUnlessBusy when free").isTrue()
        assertThat(tokens).`as`("fencing tokens of the two exports").hasSize(2)
        assertThat(tokens[1]).isGreaterThan(tokens[0])

        val readerIn = CompletableDeferred<Unit>()
        val letGo = CompletableDeferred<Unit>()
        val firstRead = async(Dispatchers.Default) { jobs.read { readerIn.complete(Unit); letGo.await(); "first" } }
        readerIn.await()
        assertThat(jobs.read { observer.inspect("report").kind() }).`as`("a second reader, beside the first")
            .isEqualTo(LockKind.SHARED)
        letGo.complete(Unit)
        assertThat(firstRead.await()).isEqualTo("first")

        assertThat(client.semaphore("partner-api").trySetPermits(3)).isTrue()
        assertThat(jobs.callPartner { client.semaphore("partner-api").availablePermits() })
            .`as`("permits free during the call").isEqualTo(1)
        assertThat(client.semaphore("partner-api").availablePermits()).`as`("after the call").isEqualTo(3)
    }
}
