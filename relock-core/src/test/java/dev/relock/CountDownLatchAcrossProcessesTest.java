package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** A count-down latch reaching zero wakes the threads waiting for it in other processes. */
@Tag("redis")
class CountDownLatchAcrossProcessesTest extends OneServerTestBase {

    private static final Duration START = Duration.ofSeconds(60);

    @Test
    void reachingZeroWakesTheWaitersOfOtherProcesses() throws Exception {
        RelockCountDownLatch latch = newClient().countDownLatch("deploy");
        assertThat(latch.trySetCount(2)).isTrue();
        List<Process> children = new ArrayList<>();
        List<CompletableFuture<String>> lines = new ArrayList<>();
        try {
            for (int i = 0; i < 2; i++) {
                Process child = new ProcessBuilder(ProcessHandle.current().info().command().orElseThrow(), "-cp",
                        System.getProperty("java.class.path"), LatchWaiterInChildJvm.class.getName(), redis.uri(),
                        "deploy", Long.toString(START.toMillis()))
                        .redirectError(ProcessBuilder.Redirect.DISCARD).start();
                children.add(child);
                lines.add(CompletableFuture.supplyAsync(() -> firstLine(child)));
            }
            // both children's clients have read the latch armed and wait for it
            await().atMost(START).until(() -> latch.inspect().waitingClients().size() == 2);
            assertThat(latch.countDown()).isEqualTo(1);
            assertThat(lines).noneMatch(CompletableFuture::isDone);
            assertThat(newClient().countDownLatch("deploy").countDown()).isZero();
            for (int i = 0; i < 2; i++) {
                assertThat(lines.get(i).get(HANG.toMillis(), TimeUnit.MILLISECONDS)).isEqualTo("OPENED true");
                assertThat(children.get(i).waitFor(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
                assertThat(children.get(i).exitValue()).isZero();
            }
        } finally {
            children.forEach(Process::destroyForcibly);
        }
    }

    private static String firstLine(Process child) {
        try (BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(),
                StandardCharsets.UTF_8))) {
            return out.readLine();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
