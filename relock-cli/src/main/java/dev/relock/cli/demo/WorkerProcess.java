package dev.relock.cli.demo;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The parent's handle on one {@link Worker} JVM: starts it, sends it commands, and collects what it
 * reports for the current phase.
 *
 * <p>Design notes. One reader thread per stream: stdout is parsed into {@link #phase}, stderr is
 * kept as a short tail for error messages. {@link #phase} is replaced by the caller's thread before
 * it sends "run" (a volatile write, then the pipe), so the reader always files lines under the phase
 * they belong to; the caller reads a phase's lists only after its {@code done} future completed,
 * which orders the reader's writes before those reads. If the process ends or breaks the protocol,
 * every pending future fails with a message that includes the tail of its stderr.
 */
final class WorkerProcess implements AutoCloseable {

    /** System property on every worker's command line naming the parent's pid: how tests find them. */
    static final String PARENT_PROPERTY = "relock.demo.parent";

    private static final int STDERR_TAIL_LINES = 20;

    private final int index;
    private final Process process;
    private final Writer stdin;
    private final CompletableFuture<Void> ready = new CompletableFuture<>();
    private final Deque<String> stderrTail = new ArrayDeque<>(); // guarded by itself
    private volatile Phase phase;
    private WorkerFailure failure; // guarded by this; the first failure, kept

    /** What one worker reported in one phase. */
    static final class Phase {
        final List<Acquisition> acquisitions = new ArrayList<>(); // written by the reader thread only
        final CompletableFuture<Summary> done = new CompletableFuture<>();
        volatile long progress;
    }

    /** The worker's closing line of a phase. */
    record Summary(long elapsedMicros, long increments, long fencingViolations, long leasesLost) {}

    /** A worker failed; {@code unavailable} if it could not reach Redis. */
    static final class WorkerFailure extends RuntimeException {
        final boolean unavailable;

        WorkerFailure(String message, boolean unavailable) {
            super(message);
            this.unavailable = unavailable;
        }
    }

    private WorkerProcess(int index, Process process) {
        this.index = index;
        this.process = process;
        this.stdin = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        Thread stdout = new Thread(this::readStdout, "relock-demo-worker-" + index + "-out");
        stdout.setDaemon(true);
        stdout.start();
        Thread stderr = new Thread(this::readStderr, "relock-demo-worker-" + index + "-err");
        stderr.setDaemon(true);
        stderr.start();
        process.onExit().thenRun(() -> {
            try {
                stderr.join(1_000); // its last words, e.g. why the JVM could not start
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            fail(exitDescription(process.exitValue()), false);
        });
    }

    /** Starts worker {@code index} in a new JVM with this JVM's Java and classpath, and configures it. */
    static WorkerProcess start(int index, Map<String, String> config) throws IOException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        // short-lived and waiting on the network: start fast, stay small
        command.add("-XX:TieredStopAtLevel=1");
        command.add("-XX:+UseSerialGC");
        command.add("-Xmx128m");
        // the launcher may run with a class-data sharing archive of this classpath: it suits workers too
        ProcessHandle.current().info().arguments().ifPresent(arguments -> {
            for (String argument : arguments) {
                if (argument.startsWith("-XX:SharedArchiveFile=")) {
                    command.add(argument);
                }
            }
        });
        command.add("-Dorg.slf4j.simpleLogger.defaultLogLevel=warn");
        command.add("-Dio.lettuce.core.jfr=false"); // Lettuce's JFR events cost start-up time and are not wanted
        if (Runtime.version().feature() >= 23) {
            // Netty uses sun.misc.Unsafe, which Java 24+ warns about on stderr at every start
            command.add("--sun-misc-unsafe-memory-access=allow");
        }
        command.add("-D" + PARENT_PROPERTY + "=" + ProcessHandle.current().pid());
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(Worker.class.getName());
        Process process = new ProcessBuilder(command).start();
        WorkerProcess worker = new WorkerProcess(index, process);
        StringBuilder lines = new StringBuilder();
        config.forEach((key, value) -> lines.append(key).append('=').append(value).append('\n'));
        lines.append(WorkerProtocol.CONNECT);
        worker.send(lines.toString());
        return worker;
    }

    int index() {
        return index;
    }

    /** Completes when the worker is connected to Redis. */
    CompletableFuture<Void> ready() {
        return ready;
    }

    /** Starts a phase; its results arrive in the returned object. */
    Phase run(boolean locked, long millis) {
        Phase next = new Phase();
        phase = next;
        WorkerFailure failed;
        synchronized (this) {
            failed = failure;
        }
        if (failed != null) {
            next.done.completeExceptionally(failed);
        } else {
            send(WorkerProtocol.RUN + (locked ? " locked " : " unlocked ") + millis);
        }
        return next;
    }

    /** Asks the worker to exit: "quit", then end of input, which halts it even if it is busy. */
    void requestExit() {
        if (process.isAlive()) {
            send(WorkerProtocol.QUIT);
        }
        try {
            synchronized (stdin) {
                stdin.close();
            }
        } catch (IOException e) {
            // gone already
        }
    }

    /** Waits until {@code deadline} (a {@link System#nanoTime()}) for the exit, then SIGKILLs it. */
    void awaitExit(long deadline) {
        try {
            if (!process.waitFor(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                process.destroyForcibly();
                process.waitFor(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    /** Ends the worker, asking first, and returns once it is gone (SIGKILL after a second). */
    @Override
    public void close() {
        requestExit();
        awaitExit(System.nanoTime() + TimeUnit.SECONDS.toNanos(1));
    }

    /** Kills the worker at once, without asking (for a JVM shutdown hook). */
    void kill() {
        process.destroyForcibly();
    }

    private void send(String lines) {
        try {
            synchronized (stdin) {
                stdin.write(lines);
                stdin.write('\n');
                stdin.flush();
            }
        } catch (IOException e) {
            // the worker is gone: onExit reports it with its stderr
        }
    }

    private void readStdout() {
        try (BufferedReader in = new BufferedReader(
                new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                handle(line);
            }
        } catch (IOException | RuntimeException e) {
            fail("sent what the parent cannot read: " + e.getMessage(), false);
            process.destroyForcibly();
        }
    }

    private void handle(String line) {
        String[] fields = line.split(" ");
        Phase current = phase;
        switch (fields[0]) {
            case WorkerProtocol.READY -> ready.complete(null);
            case WorkerProtocol.ACQUISITION -> current.acquisitions.add(Acquisition.parse(index, fields));
            case WorkerProtocol.PROGRESS -> current.progress = Long.parseLong(fields[1]);
            case WorkerProtocol.DONE -> current.done.complete(new Summary(Long.parseLong(fields[1]),
                    Long.parseLong(fields[2]), Long.parseLong(fields[3]), Long.parseLong(fields[4])));
            case WorkerProtocol.ERROR -> fail(": " + String.join(" ", List.of(fields).subList(2, fields.length)),
                    fields[1].equals(WorkerProtocol.UNAVAILABLE));
            default -> throw new IllegalStateException("unexpected line '" + line + "'");
        }
    }

    private void readStderr() {
        try (BufferedReader in = new BufferedReader(
                new InputStreamReader(process.getErrorStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                synchronized (stderrTail) {
                    if (stderrTail.size() == STDERR_TAIL_LINES) {
                        stderrTail.removeFirst();
                    }
                    stderrTail.addLast(line);
                }
            }
        } catch (IOException e) {
            // the process is gone
        }
    }

    /** The last lines the worker wrote to stderr (its logs and stack traces). */
    List<String> stderrTail() {
        synchronized (stderrTail) {
            return List.copyOf(stderrTail);
        }
    }

    /**
     * Records the first failure and fails whatever is still pending with it. A normal exit after
     * "quit" comes here too; by then nothing is pending.
     */
    private synchronized void fail(String what, boolean unavailable) {
        if (failure == null) {
            failure = new WorkerFailure("worker " + (index + 1) + " (pid " + process.pid() + ") " + what, unavailable);
        }
        ready.completeExceptionally(failure);
        Phase current = phase;
        if (current != null) {
            current.done.completeExceptionally(failure);
        }
    }

    private String exitDescription(int status) {
        if (status > 128) {
            return "was killed by signal " + (status - 128);
        }
        String description = "exited with status " + status;
        if (status != 0) {
            // the first line that is not a stack frame says what went wrong
            for (String line : stderrTail()) {
                if (!line.isBlank() && !line.startsWith("\t") && !line.startsWith("Caused by")) {
                    return description + ": " + WorkerProtocol.oneLine(line);
                }
            }
        }
        return description;
    }
}
