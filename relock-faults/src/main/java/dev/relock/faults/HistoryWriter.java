package dev.relock.faults;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Appends one writer's events to its history file, stamped when appended. Each line is flushed whole
 * before {@link #append} returns, so a kill -9 loses at most the event under way and never leaves a
 * torn line. Thread-safe: a worker's thread and its lease-lost listener append to one file.
 */
final class HistoryWriter implements AutoCloseable {

    private final String writer;
    private final BufferedWriter out;

    /** Opens (and empties) {@code file} for the events of {@code writer}, a worker id or {@link HistoryEvent#CAMPAIGN}. */
    HistoryWriter(Path file, String writer) throws IOException {
        this.writer = writer;
        this.out = Files.newBufferedWriter(file, StandardCharsets.UTF_8);
    }

    /** Appends one event of this file's writer, stamped now; tabs and line breaks in {@code detail} become spaces. */
    void append(EventKind kind, long token, String detail) {
        append(writer, kind, token, detail);
    }

    /** As {@link #append(EventKind, long, String)}, for one thread of the writer: {@code <writer>.<n>}. */
    synchronized void append(String thread, EventKind kind, long token, String detail) {
        HistoryEvent event = new HistoryEvent(System.nanoTime(), thread, kind, token, detail.replaceAll("[\\t\\r\\n]", " "));
        try {
            out.write(event.line());
            out.newLine();
            out.flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public synchronized void close() throws IOException {
        out.close();
    }
}
