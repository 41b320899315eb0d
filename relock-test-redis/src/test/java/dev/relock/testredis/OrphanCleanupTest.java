package dev.relock.testredis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** A JVM that never closes its server: the shutdown hook (normal exit) or the reaper (SIGKILL) must clean up. */
@Tag("redis")
class OrphanCleanupTest {

    private Process child;

    @AfterEach
    void killChild() {
        if (child != null) {
            child.destroyForcibly();
        }
    }

    @Test
    void theReaperKillsTheServerAndDeletesTheFilesOfAKilledJvm() throws Exception {
        ChildReport report = startChild("block");
        assertThat(ProcFs.isAlive(report.serverPid)).isTrue();
        assertThat(ProcFs.isAlive(report.reaperPid)).isTrue();

        child.destroyForcibly(); // SIGKILL: no shutdown hook runs
        assertThat(child.waitFor(TestTimeouts.scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS)).isTrue();

        await().atMost(TestTimeouts.scaled(Duration.ofSeconds(10))).pollInterval(Duration.ofMillis(50))
                .until(() -> !ProcFs.isAlive(report.serverPid));
        await().atMost(TestTimeouts.scaled(Duration.ofSeconds(5))).pollInterval(Duration.ofMillis(50))
                .until(() -> !Files.exists(report.baseDirectory) && !ProcFs.isAlive(report.reaperPid));
        assertThat(report.serverDirectory).doesNotExist();
    }

    @Test
    void theShutdownHookStopsTheServerAndDeletesTheFilesOnNormalExit() throws Exception {
        ChildReport report = startChild("exit");

        assertThat(child.waitFor(TestTimeouts.scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS)).isTrue();

        // the hook finished before the JVM ended
        assertThat(ProcFs.isAlive(report.serverPid)).isFalse();
        assertThat(report.baseDirectory).doesNotExist();
        // and the reaper notices the JVM is gone and ends by itself
        await().atMost(TestTimeouts.scaled(Duration.ofSeconds(5))).pollInterval(Duration.ofMillis(50))
                .until(() -> !ProcFs.isAlive(report.reaperPid));
    }

    @Test
    void theReaperKillsOnlyListedPidsThatAreStillThatRedisServer() throws Exception {
        Path base = ProcessRegistry.instance().newDirectory("reaper-test-");
        Process standInJvm = new ProcessBuilder("sleep", "60").start();
        Process bystander = new ProcessBuilder("sleep", "60").start();
        try (RedisServer listed = RedisServer.start(); RedisServer listedOnAnotherPort = RedisServer.start()) {
            Files.writeString(base.resolve("servers"), String.join("\n",
                    listed.pid() + " " + listed.port() + " " + listed.directory(),
                    // a reused pid: a redis-server, but not on the listed port nor in the listed directory
                    listedOnAnotherPort.pid() + " " + (listedOnAnotherPort.port() + 1) + " " + base.resolve("gone"),
                    // a reused pid that is not a redis-server at all
                    bystander.pid() + " " + listed.port() + " " + listed.directory(),
                    ""));
            Process reaper = ProcessRegistry.startReaper(standInJvm.pid(), base);

            standInJvm.destroyForcibly();
            standInJvm.waitFor();

            assertThat(reaper.waitFor(TestTimeouts.scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS))
                    .isTrue();
            assertThat(reaper.exitValue()).isZero();
            assertThat(base).doesNotExist();
            await().atMost(TestTimeouts.scaled(Duration.ofSeconds(5))).pollInterval(Duration.ofMillis(20))
                    .until(() -> !listed.isRunning());
            assertThat(listedOnAnotherPort.isRunning()).isTrue();
            assertThat(bystander.isAlive()).isTrue();
        } finally {
            standInJvm.destroyForcibly();
            bystander.destroyForcibly();
        }
    }

    private ChildReport startChild(String mode) throws IOException, InterruptedException, ExecutionException {
        String java = ProcessHandle.current().info().command().orElseThrow();
        List<String> command = new ArrayList<>(List.of(java, "-cp", System.getProperty("java.class.path")));
        for (String property : List.of(RedisBinary.CHOICE_PROPERTY, TestTimeouts.FACTOR_PROPERTY, "java.io.tmpdir")) {
            String value = System.getProperty(property);
            if (value != null) {
                command.add("-D" + property + "=" + value);
            }
        }
        command.add(ServerInChildJvm.class.getName());
        command.add(mode);
        child = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();

        BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
        CompletableFuture<List<String>> lines = CompletableFuture.supplyAsync(() -> {
            List<String> read = new ArrayList<>();
            try {
                for (int i = 0; i < 4; i++) {
                    String line = out.readLine();
                    if (line == null) {
                        break;
                    }
                    read.add(line);
                }
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
            return read;
        });
        List<String> report;
        try {
            report = lines.get(TestTimeouts.scaled(Duration.ofSeconds(20)).toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw new AssertionError("the child JVM printed no report within 20 s", e);
        }
        assertThat(report).as("child JVM report").hasSize(4);
        return new ChildReport(Long.parseLong(report.get(0)), Path.of(report.get(1)), Path.of(report.get(2)),
                Long.parseLong(report.get(3)));
    }

    private record ChildReport(long serverPid, Path serverDirectory, Path baseDirectory, long reaperPid) {
    }
}
