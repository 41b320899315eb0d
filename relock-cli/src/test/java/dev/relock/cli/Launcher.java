package dev.relock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The real launcher {@code ./relock} at the repository root, run as a process the way a user or a
 * cron job runs it. The first call builds the command line if it is missing or stale (a nested
 * {@code mvn package}, within the time limit of {@link #ensureBuilt()}); every test class calls
 * that in its set-up, so a single test's time bound never includes a build.
 *
 * <p>Output goes to files, not pipes: a child of relock that outlives it (which a test may
 * provoke) must not keep a test waiting for the end of a stream.
 */
final class Launcher {

    static final Path ROOT = Path.of(System.getProperty("basedir", "")).toAbsolutePath().getParent();
    static final Path SCRIPT = ROOT.resolve("relock");
    static final Duration RUN_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration BUILD_TIMEOUT = Duration.ofMinutes(5);
    private static boolean built;

    /** What a finished run left. */
    record Result(int exitCode, String stdout, String stderr, Duration elapsed) {

        List<String> stderrLines() {
            return stderr.lines().toList();
        }

        /** For assertion messages. */
        String describe() {
            return "exit " + exitCode + " after " + elapsed.toMillis() + " ms\n--- stdout\n" + stdout
                    + "--- stderr\n" + stderr;
        }
    }

    /** A run in progress. */
    static final class Running implements AutoCloseable {

        private final Process process;
        private final Path stdout;
        private final Path stderr;
        private final long startNanos;

        private Running(Process process, Path stdout, Path stderr, long startNanos) {
            this.process = process;
            this.stdout = stdout;
            this.stderr = stderr;
            this.startNanos = startNanos;
        }

        Process process() {
            return process;
        }

        /** Waits for the exit, at most {@code timeout}; fails the test (and kills the run) after it. */
        Result await(Duration timeout) {
            try {
                if (!process.waitFor(timeout.toNanos(), TimeUnit.NANOSECONDS)) {
                    process.destroyForcibly();
                    throw new AssertionError("relock did not exit within " + timeout + "\n--- stdout\n"
                            + read(stdout) + "--- stderr\n" + read(stderr));
                }
            } catch (InterruptedException e) {
                process.destroyForcibly();
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted while waiting for relock", e);
            }
            Duration elapsed = Duration.ofNanos(System.nanoTime() - startNanos);
            return new Result(process.exitValue(), read(stdout), read(stderr), elapsed);
        }

        Result await() {
            return await(RUN_TIMEOUT);
        }

        /** What it has written to stderr so far. */
        String stderrSoFar() {
            return read(stderr);
        }

        /** Kills relock (not its children) if it still runs. */
        @Override
        public void close() {
            process.destroyForcibly();
        }
    }

    /** Builds the command line through the launcher itself, once per JVM. */
    static synchronized void ensureBuilt() {
        if (built) {
            return;
        }
        Result result = startCommand(List.of(SCRIPT.toString(), "--version"), ROOT, Map.of()).await(BUILD_TIMEOUT);
        assertThat(result.exitCode()).as("./relock --version (builds on first use)\n%s", result.describe()).isZero();
        assertThat(ROOT.resolve("relock-cli/target/relock-cli.jar")).exists();
        built = true;
    }

    /** {@code ./relock args...}, to the end. */
    static Result run(String... args) {
        return start(List.of(), Map.of(), args).await();
    }

    /** {@code ./relock args...} in the background. */
    static Running start(String... args) {
        return start(List.of(), Map.of(), args);
    }

    /**
     * {@code wrapper... ./relock args...} (a wrapper such as {@code setsid}), in the repository root,
     * with {@code environment} added and {@code RELOCK_REDIS} removed unless given there. The jar
     * built by {@link #ensureBuilt()} is used as it is ({@code RELOCK_BUILD=never}), so sources
     * edited while the tests run cannot start a build in the middle of a test.
     */
    static Running start(List<String> wrapper, Map<String, String> environment, String... args) {
        List<String> command = new ArrayList<>(wrapper);
        command.add(SCRIPT.toString());
        command.addAll(List.of(args));
        Map<String, String> withoutBuild = new java.util.HashMap<>(environment);
        withoutBuild.putIfAbsent("RELOCK_BUILD", "never");
        return startCommand(command, ROOT, withoutBuild);
    }

    /** Any command line, with output captured as for relock. */
    static Running startCommand(List<String> command, Path directory, Map<String, String> environment) {
        return startCommand(command, directory, variables -> {
            variables.remove("RELOCK_REDIS");
            variables.putAll(environment);
        });
    }

    /** Any command line with exactly {@code environment}, nothing inherited (as cron starts a job). */
    static Running startCommandWithOnly(List<String> command, Path directory, Map<String, String> environment) {
        return startCommand(command, directory, variables -> {
            variables.clear();
            variables.putAll(environment);
        });
    }

    private static Running startCommand(List<String> command, Path directory,
            java.util.function.Consumer<Map<String, String>> environment) {
        try {
            Path stdout = Files.createTempFile("relock-test-", ".out");
            Path stderr = Files.createTempFile("relock-test-", ".err");
            stdout.toFile().deleteOnExit();
            stderr.toFile().deleteOnExit();
            ProcessBuilder builder = new ProcessBuilder(command)
                    .directory(directory.toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                    .redirectOutput(stdout.toFile())
                    .redirectError(stderr.toFile());
            environment.accept(builder.environment());
            long start = System.nanoTime();
            return new Running(builder.start(), stdout, stderr, start);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String read(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private Launcher() {}
}
