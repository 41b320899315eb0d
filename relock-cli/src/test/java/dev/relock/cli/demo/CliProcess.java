package dev.relock.cli.demo;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * {@code relock} run as a real process ({@code java -cp <test classpath> dev.relock.cli.Main ...}), as
 * a user runs it: its own JVM, System.exit, signals, children. Output is collected as it comes, so
 * a test can wait for a line without sleeping.
 */
public final class CliProcess implements AutoCloseable {

    /** The exit code and everything the process printed. */
    public record Result(int exitCode, String stdout, String stderr) {

        public List<String> stderrLines() {
            return stderr.lines().toList();
        }
    }

    private final Process process;
    private final StringBuffer stdout = new StringBuffer();
    private final StringBuffer stderr = new StringBuffer();
    private final BlockingQueue<String> stdoutLines = new LinkedBlockingQueue<>();
    private final List<Thread> readers = new ArrayList<>();

    private CliProcess(Process process) {
        this.process = process;
        readers.add(reader(process.getInputStream(), stdout, stdoutLines));
        readers.add(reader(process.getErrorStream(), stderr, new LinkedBlockingQueue<>()));
    }

    /**
     * Starts {@code relock args...} with this JVM's Java and classpath. {@code environment} entries
     * are added to the environment; {@code RELOCK_REDIS} is removed unless given there.
     */
    public static CliProcess start(Map<String, String> environment, String... args) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir"));
        if (Runtime.version().feature() >= 23) {
            // as the launcher must: else Java 24+ warns on stderr that Netty uses sun.misc.Unsafe
            command.add("--sun-misc-unsafe-memory-access=allow");
        }
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add("dev.relock.cli.Main");
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command);
        builder.environment().remove("RELOCK_REDIS");
        builder.environment().putAll(environment);
        try {
            Process process = builder.start();
            process.getOutputStream().close();
            return new CliProcess(process);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Runs {@code relock args...} to the end (at most {@code timeout}). */
    public static Result run(Duration timeout, Map<String, String> environment, String... args) {
        try (CliProcess cli = start(environment, args)) {
            return cli.await(timeout);
        }
    }

    public Process process() {
        return process;
    }

    /** Waits until the process prints a line on stdout that matches; fails after {@code timeout}. */
    public String awaitStdoutLine(Predicate<String> matching, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            String line = stdoutLines.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (line == null) {
                throw new AssertionError("no matching line on stdout within " + timeout + "; stdout:\n" + stdout
                        + "\nstderr:\n" + stderr);
            }
            if (matching.test(line)) {
                return line;
            }
        }
    }

    /** Waits for the exit and the end of both streams. */
    public Result await(Duration timeout) {
        try {
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                throw new AssertionError("relock did not exit within " + timeout + "; stdout:\n" + stdout
                        + "\nstderr:\n" + stderr);
            }
            for (Thread reader : readers) {
                reader.join(TimeUnit.SECONDS.toMillis(10));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
        return new Result(process.exitValue(), stdout.toString(), stderr.toString());
    }

    /** The worker JVMs whose parent is the process with this pid, found by their command line. */
    public static List<ProcessHandle> workersOf(long parentPid) {
        String marker = "-D" + WorkerProcess.PARENT_PROPERTY + "=" + parentPid;
        return ProcessHandle.allProcesses()
                .filter(p -> p.info().commandLine().map(line -> line.contains(marker)).orElse(false))
                .toList();
    }

    /** Kills the process if it still runs, and its workers with it. */
    @Override
    public void close() {
        List<ProcessHandle> workers = workersOf(process.pid());
        process.destroyForcibly();
        workers.forEach(ProcessHandle::destroyForcibly);
    }

    private static Thread reader(InputStream stream, StringBuffer all, BlockingQueue<String> lines) {
        Thread thread = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(stream, StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    all.append(line).append('\n');
                    lines.add(line);
                }
            } catch (IOException e) {
                // the process is gone
            }
        }, "cli-output-reader");
        thread.setDaemon(true);
        thread.start();
        return thread;
    }
}
