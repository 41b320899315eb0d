package dev.relock.kotlin.docs

import dev.relock.LockKind
import dev.relock.kotlin.OneServerTestBase
import java.nio.file.Files
import java.nio.file.Path
import java.util.concurrent.CopyOnWriteArrayList
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.runBlocking
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.Test

/**
 * The Kotlin of docs/async.md is compiled and runs: every ```kotlin block there is, line for line, a region of a test
 * source between the markers [BEGIN] and [END] ([ReportJobs.kt][ReportJobs], compiled with the tests, its imports
 * those of the block), and [theExampleRuns] runs that code against the fixture's server.
 */
class AsyncDocTest : OneServerTestBase() {

    @Test
    fun theKotlinBlocksOfTheDocAreTheCompiledExamples() {
        val blocks = kotlinBlocks(Files.readAllLines(MODULE.resolve("../docs/async.md")))
        val regions = markedRegions(Files.readAllLines(MODULE.resolve(EXAMPLE)))
        assertThat(blocks).`as`("```kotlin blocks in docs/async.md").isNotEmpty()
        assertThat(blocks.map { it.joinToString("\n") })
            .`as`("docs/async.md's kotlin blocks, as the regions marked in %s", EXAMPLE)
            .isEqualTo(regions.map { it.joinToString("\n") })
    }

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

    private companion object {
        const val BEGIN = "// docs/async.md kotlin begin"
        const val END = "// docs/async.md kotlin end"
        const val EXAMPLE = "src/test/kotlin/dev/relock/kotlin/docs/ReportJobs.kt"

        /** This module's directory: Maven runs the tests there. */
        val MODULE: Path = Path.of("").toAbsolutePath()

        /** The lines of each ```kotlin block, in order, without their common indentation. */
        fun kotlinBlocks(lines: List<String>): List<List<String>> = buildList {
            var open = -1
            lines.forEachIndexed { index, line ->
                when {
                    open < 0 && line.trim() == "```kotlin" -> open = index
                    open >= 0 && line.trim() == "```" -> {
                        add(unindented(lines.subList(open + 1, index)))
                        open = -1
                    }
                }
            }
            assertThat(open).`as`("a ```kotlin block left open").isNegative()
        }

        /** The lines between each pair of markers, in order, without their common indentation. */
        fun markedRegions(lines: List<String>): List<List<String>> = buildList {
            var begin = -1
            lines.forEachIndexed { index, line ->
                when (line.trim()) {
                    BEGIN -> begin = index
                    END -> {
                        assertThat(begin).`as`("'%s' before the '%s' at line %d", BEGIN, END, index + 1).isNotNegative()
                        add(unindented(lines.subList(begin + 1, index)))
                        begin = -1
                    }
                }
            }
        }

        fun unindented(lines: List<String>): List<String> {
            val indent = lines.filter { it.isNotBlank() }.minOfOrNull { it.length - it.trimStart().length } ?: 0
            return lines.map { if (it.isBlank()) "" else it.substring(indent).trimEnd() }
        }
    }
}
