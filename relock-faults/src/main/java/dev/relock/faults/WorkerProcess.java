package dev.relock.faults;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A {@link FaultWorker} in a JVM of its own, started by this campaign: only these processes are ever
 * killed or paused, by their own PID. Its output and errors go to files beside its history.
 */
final class WorkerProcess {

    final String id;
    final Path history;
    private final Process process;

    private WorkerProcess(String id, Path history, Process process) {
        this.id = id;
        this.history = history;
        this.process = process;
    }

    /**
     * Starts worker {@code id} with its history, output and errors in {@code dir}; {@code options} are the
     * {@link FaultWorker}'s other options.
     */
    static WorkerProcess start(String id, Path dir, List<String> options) throws IOException {
        String java = ProcessHandle.current().info().command().orElse("java");
        Path history = dir.resolve(id + ".history");
        List<String> command = new ArrayList<>(List.of(java, "-Xmx128m", "-XX:TieredStopAtLevel=1",
                "-cp", System.getProperty("java.class.path"), FaultWorker.class.getName(),
                "--id", id, "--history", history.toString()));
        command.addAll(options);
        Process process = new ProcessBuilder(command)
                .redirectOutput(dir.resolve(id + ".out").toFile())
                .redirectError(dir.resolve(id + ".err").toFile())
                .start();
        return new WorkerProcess(id, history, process);
    }

    /** Whether the worker has logged STARTED: it is connected and its run's seconds count. */
    boolean hasStarted() throws IOException {
        if (!Files.exists(history)) {
            return false;
        }
        try (java.util.stream.Stream<String> lines = Files.lines(history, StandardCharsets.UTF_8)) {
            return lines.anyMatch(line -> line.contains("\t" + EventKind.STARTED + "\t"));
        }
    }

    /**
     * Whether the worker's history ends inside a section: it holds the lock and has not begun releasing (of a worker
     * of several threads: the one that logged last).
     */
    boolean inSection() throws IOException {
        if (!Files.exists(history)) {
            return false;
        }
        String last = lastLine();
        if (last.isEmpty()) {
            return false;
        }
        EventKind kind = HistoryEvent.parse(last).kind();
        return kind == EventKind.ACQUIRED || kind == EventKind.COUNTER || kind == EventKind.WRITE_SENT
                || kind == EventKind.WRITE_OK || kind == EventKind.WRITE_REFUSED || kind == EventKind.SQL_SENT
                || kind == EventKind.SQL_OK || kind == EventKind.SQL_REFUSED || kind == EventKind.PRODUCED
                || kind == EventKind.SIGNALLED || kind == EventKind.CONSUMING || kind == EventKind.CONSUMED;
    }

    /** The history's last complete line, or "" (the worker writes whole lines and flushes each). */
    private String lastLine() throws IOException {
        try (RandomAccessFile file = new RandomAccessFile(history.toFile(), "r")) {
            long length = file.length();
            int size = (int) Math.min(length, 4096);
            byte[] tail = new byte[size];
            file.seek(length - size);
            file.readFully(tail);
            String text = new String(tail, StandardCharsets.UTF_8);
            int end = text.lastIndexOf('\n');
            int start = end < 0 ? -1 : text.lastIndexOf('\n', end - 1);
            if (start < 0 && size < length) {
                return ""; // a line longer than the tail read: not one of the worker's
            }
            return end < 0 ? "" : text.substring(start + 1, end);
        }
    }

    boolean isAlive() {
        return process.isAlive();
    }

    /** kill -9: the worker gets no chance to release or log anything more. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
    }

    /** kill -9 without waiting, for a shutdown hook; a paused worker dies too. */
    void destroy() {
        process.destroyForcibly();
    }

    /** SIGSTOP: the worker freezes where it is, its lease keeper too. */
    void pause() throws IOException, InterruptedException {
        signal("STOP");
    }

    /** SIGCONT after {@link #pause()}. */
    void resume() throws IOException, InterruptedException {
        signal("CONT");
    }

    /**
     * Waits for the worker to end by itself; when it has not within {@code bound}, it is stuck: its threads are
     * dumped to its {@code .out} file (SIGQUIT), then it is killed.
     */
    boolean awaitEnd(Duration bound) throws InterruptedException {
        if (process.waitFor(bound.toMillis(), TimeUnit.MILLISECONDS)) {
            return true;
        }
        try {
            signal("QUIT");
            process.waitFor(2, TimeUnit.SECONDS); // the JVM writes the dump and goes on running
        } catch (IOException e) {
            // no dump: the kill still ends it
        }
        kill();
        return false;
    }

    private void signal(String name) throws IOException, InterruptedException {
        if (!process.isAlive()) {
            // ended and reaped: its pid may be another process's by now, which must not be signalled
            return;
        }
        Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(process.pid())).inheritIO().start();
        if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
            throw new IOException("kill -" + name + " " + process.pid() + " failed");
        }
    }
}
