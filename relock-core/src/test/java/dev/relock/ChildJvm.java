package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A {@link LockHolderInChildJvm} in a JVM of its own, on this test's class path, that a test can talk to, kill -9,
 * SIGSTOP and SIGCONT. Every line it prints is offered to an {@link ExclusionChecker} and queued for
 * {@link #awaitLine}; its standard error goes to a file quoted when an expected line does not come.
 *
 * <p>Threads: one daemon thread reads the child's output; the other methods are for the test's thread.
 */
final class ChildJvm implements AutoCloseable {

    private static final Duration START = Duration.ofSeconds(30);

    private final Process process;
    private final Path stderr;
    private final Writer stdin;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();

    private ChildJvm(Process process, Path stderr) {
        this.process = process;
        this.stderr = stderr;
        this.stdin = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
    }

    /**
     * Starts a child that acquires {@code lock} on {@code redisUri} with a renewed {@code lease}, and waits until it
     * has printed {@code ACQUIRED}.
     *
     * @return the child; {@link #token()} is its fencing token
     */
    static ChildJvm holding(String redisUri, String lock, Duration lease, ExclusionChecker checker, Path dir)
            throws IOException, InterruptedException {
        String java = ProcessHandle.current().info().command().orElseThrow();
        List<String> command = new ArrayList<>(List.of(java, "-cp", System.getProperty("java.class.path")));
        String tmpdir = System.getProperty("java.io.tmpdir");
        if (tmpdir != null) {
            command.add("-Djava.io.tmpdir=" + tmpdir);
        }
        command.addAll(List.of(LockHolderInChildJvm.class.getName(), redisUri, lock,
                Long.toString(lease.toMillis())));
        Path stderr = Files.createTempFile(dir, "child-", "-stderr.txt");
        Process process = new ProcessBuilder(command).redirectError(stderr.toFile()).start();
        ChildJvm child = new ChildJvm(process, stderr);
        Thread reader = new Thread(() -> child.readOutput(checker), "child-" + process.pid() + "-output");
        reader.setDaemon(true);
        reader.start();
        child.token = Long.parseLong(child.awaitLine("ACQUIRED ", START).substring("ACQUIRED ".length()).trim());
        return child;
    }

    private long token;

    /** The fencing token the child acquired its lock with. */
    long token() {
        return token;
    }

    long pid() {
        return process.pid();
    }

    /** Sends a command line ({@code WRITE}, {@code UNLOCK}) to the child. */
    void send(String command) throws IOException {
        stdin.write(command + "\n");
        stdin.flush();
    }

    /**
     * Waits for the next line starting with {@code prefix}, skipping others.
     *
     * @throws AssertionError with the child's stderr if none comes within {@code timeout}
     */
    String awaitLine(String prefix, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            String line = lines.poll(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
            if (line == null) {
                throw new AssertionError("child " + pid() + " printed no '" + prefix + "' line within " + timeout
                        + "; alive: " + process.isAlive() + "; its stderr:\n" + stderr());
            }
            if (line.startsWith(prefix)) {
                return line;
            }
        }
    }

    /** SIGKILL, and waits for the exit. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        assertThat(process.waitFor(10, TimeUnit.SECONDS)).as("child JVM exited").isTrue();
    }

    /** SIGSTOP: the whole JVM freezes, its lease keeper too, as in a long GC pause or a suspended VM. */
    void pause() throws IOException, InterruptedException {
        signal("STOP");
    }

    /** SIGCONT. */
    void resume() throws IOException, InterruptedException {
        signal("CONT");
    }

    /** Resumes the child if paused, closes its input (it releases and exits) and kills it if it lingers. */
    @Override
    public void close() throws IOException, InterruptedException {
        if (process.isAlive()) {
            signal("CONT");
        }
        try {
            stdin.close();
        } catch (IOException ignored) {
            // already gone
        }
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
    }

    private void signal(String name) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-s", name, Long.toString(process.pid())).start();
        assertThat(kill.waitFor(5, TimeUnit.SECONDS)).as("kill -s %s returned", name).isTrue();
        assertThat(kill.exitValue()).as("kill -s %s %s", name, process.pid()).isZero();
    }

    private void readOutput(ExclusionChecker checker) {
        try (BufferedReader out = new BufferedReader(
                new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = out.readLine()) != null) {
                checker.add(line);
                lines.add(line);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private String stderr() {
        try {
            return Files.readString(stderr);
        } catch (IOException e) {
            return "(unreadable: " + e + ")";
        }
    }
}
