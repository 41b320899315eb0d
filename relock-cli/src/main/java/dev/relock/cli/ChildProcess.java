package dev.relock.cli;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The COMMAND of {@code relock exec}, and the signals relock receives on its behalf.
 *
 * <p>Design notes. relock stands in for its child: SIGINT, SIGTERM and SIGHUP sent to relock go
 * to the child, and relock goes on waiting for it, so the lock is held exactly as long as the
 * child runs. A signal that comes before the child has started (while relock connects or waits
 * for the lock) is remembered and interrupts the main thread instead: the child is then never
 * started. Which of the two happens is decided under this object's monitor, which guards
 * {@link #process} and {@link #signalBeforeStart}; the signal dispatcher thread and the main
 * thread are the only ones that take it.
 */
final class ChildProcess {

    private final Thread mainThread;
    // @GuardedBy("this")
    private Process process;
    // @GuardedBy("this"): the first signal received before the child started, or 0
    private int signalBeforeStart;

    ChildProcess(Thread mainThread) {
        this.mainThread = mainThread;
    }

    /** Takes over SIGINT, SIGTERM and SIGHUP; call before anything that may take long. */
    void handleSignals() {
        Signals.handle("INT", this::onSignal);
        Signals.handle("TERM", this::onSignal);
        Signals.handle("HUP", this::onSignal);
    }

    private synchronized void onSignal(int number) {
        if (process == null) {
            if (signalBeforeStart == 0) {
                signalBeforeStart = number;
            }
            mainThread.interrupt();
        } else {
            forward(number);
        }
    }

    /** The signal that arrived before the child was started, or 0. */
    synchronized int signalBeforeStart() {
        return signalBeforeStart;
    }

    /**
     * Starts the child unless a signal came first.
     *
     * @return the process, or null if a signal arrived before it could be started
     * @throws IOException if the command cannot be run (not found, not executable)
     */
    synchronized Process start(ProcessBuilder builder) throws IOException {
        if (signalBeforeStart != 0) {
            return null;
        }
        process = builder.start();
        return process;
    }

    /** Sends the signal to the child; runs on the signal dispatcher thread. */
    // @GuardedBy("this")
    private void forward(int number) {
        if (!process.isAlive()) {
            return;
        }
        if (number == Signals.SIGTERM) {
            process.destroy(); // SIGTERM on Unix
            return;
        }
        // no Java API sends other signals; kill(1) does
        String name = number == Signals.SIGINT ? "INT" : number == Signals.SIGHUP ? "HUP" : Integer.toString(number);
        try {
            Process kill = new ProcessBuilder("kill", "-s", name, Long.toString(process.pid()))
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .redirectError(ProcessBuilder.Redirect.INHERIT)
                    .start();
            kill.waitFor(5, TimeUnit.SECONDS);
        } catch (IOException e) {
            System.err.println("relock: could not forward " + Signals.name(number) + " to the command (pid "
                    + process.pid() + "): " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Stops the child: SIGTERM, and after {@code grace} SIGKILL to it and to every process it
     * started that is still alive. Returns when the child has exited.
     */
    static void terminate(Process process, Duration grace) throws InterruptedException {
        // its descendants are only found through it while it lives
        List<ProcessHandle> family = new ArrayList<>();
        process.descendants().forEach(family::add);
        process.destroy();
        if (process.waitFor(grace.toNanos(), TimeUnit.NANOSECONDS)) {
            return;
        }
        process.descendants().forEach(family::add);
        process.destroyForcibly();
        for (ProcessHandle descendant : family) {
            descendant.destroyForcibly();
        }
        process.waitFor();
    }
}
