package dev.relock;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * Copies what this JVM writes to {@link System#err} while open, where the tests' SLF4J binding (slf4j-simple, which
 * looks up {@code System.err} at every write) logs. Everything still reaches the original stream. Not for tests
 * that run in parallel. Public for the tests of other packages.
 */
public final class StderrCapture implements AutoCloseable {

    private final PrintStream original = System.err;
    private final ByteArrayOutputStream copy = new ByteArrayOutputStream();

    public StderrCapture() {
        OutputStream tee = new OutputStream() {
            @Override
            public void write(int b) {
                original.write(b);
                synchronized (copy) {
                    copy.write(b);
                }
            }

            @Override
            public void write(byte[] bytes, int offset, int length) {
                original.write(bytes, offset, length);
                synchronized (copy) {
                    copy.write(bytes, offset, length);
                }
            }
        };
        System.setErr(new PrintStream(tee, true, StandardCharsets.UTF_8));
    }

    /** What was written so far. */
    public String text() {
        synchronized (copy) {
            return copy.toString(StandardCharsets.UTF_8);
        }
    }

    @Override
    public void close() {
        System.setErr(original);
    }
}
