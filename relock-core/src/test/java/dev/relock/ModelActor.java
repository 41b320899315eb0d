package dev.relock;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/**
 * One thread of one relock client that runs the operations {@link ConditionModelTest} gives it, one at a time, and
 * tells from outside what it is doing: idle, blocked where the model says it blocks (its stack), or finished with an
 * exception. The thread is its lock owner for the whole test try.
 *
 * <p>Threads: {@link #start} and the observing methods are called by the test's thread; operations run on the actor's
 * own thread. {@link #current} is written by the test's thread before the operation is queued and completed by the
 * actor's thread, so a done future means the operation ended.
 */
final class ModelActor implements AutoCloseable {

    /** An operation on the actor's thread. */
    @FunctionalInterface
    interface Work {
        void run() throws Exception;
    }

    private static final Work STOP = () -> { };

    final String name;
    final String client;
    final RelockLock lock;
    private final String ownerId;
    private final Thread thread;
    private final BlockingQueue<Work> work = new LinkedBlockingQueue<>();
    private volatile CompletableFuture<Void> current = CompletableFuture.completedFuture(null);
    private volatile String currentName = "nothing";

    ModelActor(String name, String client, RelockClient relock, String lockName) {
        this.name = name;
        this.client = client;
        this.lock = relock.lock(lockName);
        this.thread = new Thread(this::runWork, "model-" + name);
        this.thread.setDaemon(true);
        this.ownerId = relock.clientId() + ":" + thread.getId();
        thread.start();
    }

    /** The owner id relock gives this thread ({@code <client id>:<thread id>}), as Redis shows it. */
    String ownerId() {
        return ownerId;
    }

    /**
     * Runs {@code operation} on the actor's thread; it must be idle. {@code failures} gets what it throws (with the
     * operation's name), if anything.
     */
    void start(String operation, Work body, Consumer<String> failures) {
        if (!current.isDone()) {
            throw new IllegalStateException(name + " is still running " + currentName);
        }
        CompletableFuture<Void> done = new CompletableFuture<>();
        current = done;
        currentName = operation;
        work.add(() -> {
            try {
                body.run();
                done.complete(null);
            } catch (Throwable e) {
                failures.accept(name + "." + operation + " threw " + e);
                done.completeExceptionally(e);
            }
        });
    }

    /** Whether the current thread-bound hold is this thread's, asked on its own thread; it must be idle. */
    boolean isHeldByItsThread(Duration bound) throws Exception {
        AtomicReference<Boolean> held = new AtomicReference<>();
        start("isHeldByCurrentThread", () -> held.set(lock.isHeldByCurrentThread()), failure -> { });
        current.get(bound.toMillis(), TimeUnit.MILLISECONDS);
        return held.get();
    }

    /**
     * What the thread is doing: "idle" (nothing running), "threw ..." (the last operation failed), one of the blocked
     * phases of {@link ConditionModel.Status} when it is parked there, or "running &lt;operation&gt;" otherwise.
     */
    String phase() {
        CompletableFuture<Void> running = current;
        if (running.isDone()) {
            return running.isCompletedExceptionally() ? "threw in " + currentName : "idle";
        }
        Thread.State state = thread.getState();
        if (state == Thread.State.WAITING || state == Thread.State.TIMED_WAITING) {
            List<StackTraceElement> stack = List.of(thread.getStackTrace());
            String blocked = blockedPhase(stack);
            if (blocked != null && current == running && !running.isDone()) {
                return blocked;
            }
        }
        return "running " + currentName;
    }

    /** The stack of the thread, for a failure report. */
    String stack() {
        StringBuilder text = new StringBuilder(name).append(" (").append(thread.getState()).append("):");
        for (StackTraceElement frame : thread.getStackTrace()) {
            text.append("\n    at ").append(frame);
        }
        return text.toString();
    }

    // parked in an await's wait for a signal or for the lock back (RedisCondition names the phases of a blocking
    // await after them), or in an acquisition's wait (lock())
    private static String blockedPhase(List<StackTraceElement> stack) {
        for (StackTraceElement frame : stack) {
            if (frame.getClassName().endsWith(".RedisCondition")) {
                if (frame.getMethodName().equals("awaitingASignal")) {
                    return ConditionModel.Status.AWAITING_SIGNAL.phase;
                }
                if (frame.getMethodName().equals("takingTheLockBack")) {
                    return ConditionModel.Status.AWAITING_LOCK_BACK.phase;
                }
                if (frame.getMethodName().equals("await")) {
                    return null; // giving the lock up: a phase the model does not wait for
                }
            }
        }
        return stack.stream().anyMatch(f -> f.getClassName().endsWith(".SteppedAcquisition")
                && f.getMethodName().equals("run")) ? ConditionModel.Status.WAITING_FOR_LOCK.phase : null;
    }

    private void runWork() {
        while (true) {
            Work next;
            try {
                next = work.take();
            } catch (InterruptedException e) {
                return;
            }
            if (next == STOP) {
                return;
            }
            try {
                next.run();
            } catch (Exception e) {
                // the work itself completes its future with what it threw
            }
        }
    }

    /** Stops the thread once its operation ended (close the client first, which ends a blocked one). */
    @Override
    public void close() {
        work.add(STOP);
        try {
            thread.join(TimeUnit.SECONDS.toMillis(10));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (thread.isAlive()) {
            thread.interrupt();
        }
    }

    boolean isAlive() {
        return thread.isAlive();
    }

    @Override
    public String toString() {
        return name;
    }
}
