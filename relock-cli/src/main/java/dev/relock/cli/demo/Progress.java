package dev.relock.cli.demo;

import java.io.Console;
import java.io.PrintWriter;
import java.lang.reflect.Method;

/** What the engine tells the user while it runs. Called from the engine's thread only. */
public interface Progress {

    /** A step that takes a moment, e.g. starting the worker JVMs. */
    void step(String what);

    /** The running phase: {@code elapsed} of {@code total} nanoseconds, increments so far. */
    void update(String phase, long elapsedNanos, long totalNanos, long increments);

    /** The phase is over: leave the terminal line clean for what follows. */
    void finish();

    /**
     * A live {@link ProgressBar} on {@code err} when the user watches a terminal, else silence (no
     * control characters in logs or pipes).
     */
    static Progress on(PrintWriter err) {
        return interactive() ? new ProgressBar(err) : quiet();
    }

    /** Tells nothing. */
    static Progress quiet() {
        return new Progress() {
            @Override
            public void step(String what) {}

            @Override
            public void update(String phase, long elapsedNanos, long totalNanos, long increments) {}

            @Override
            public void finish() {}
        };
    }

    /**
     * Whether stdin and stdout are a terminal. Java 22 and later return a console even when they
     * are not, and tell by {@code Console.isTerminal()}, which Java 17 lacks.
     */
    private static boolean interactive() {
        Console console = System.console();
        if (console == null) {
            return false;
        }
        try {
            Method isTerminal = Console.class.getMethod("isTerminal");
            return (Boolean) isTerminal.invoke(console);
        } catch (NoSuchMethodException e) {
            return true;
        } catch (ReflectiveOperationException | RuntimeException e) {
            return false;
        }
    }
}
