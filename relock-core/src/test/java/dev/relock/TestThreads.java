package dev.relock;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The threads one test started, each a fresh lock owner (nothing is re-entered by accident, as it
 * could be on a pooled thread), and the check after the test that every one of them ended.
 * Shared by the test bases of every topology.
 */
public final class TestThreads {

    private final List<Thread> threads = new CopyOnWriteArrayList<>();

    /** Runs {@code work} on a new daemon thread named {@code name}; its result or failure completes the future. */
    public <T> CompletableFuture<T> start(String name, Callable<T> work) {
        CompletableFuture<T> result = new CompletableFuture<>();
        Thread thread = new Thread(() -> {
            try {
                result.complete(work.call());
            } catch (Throwable e) {
                result.completeExceptionally(e);
            }
        }, name);
        thread.setDaemon(true);
        threads.add(thread);
        thread.start();
        return result;
    }

    /**
     * Waits up to {@code bound} for each thread started since the last call, interrupts those still
     * running and forgets them all.
     *
     * @return the names of the threads that were still running
     */
    public List<String> joinAll(Duration bound) throws InterruptedException {
        List<String> stillRunning = new ArrayList<>();
        for (Thread thread : threads) {
            thread.join(bound.toMillis());
            if (thread.isAlive()) {
                stillRunning.add(thread.getName());
                thread.interrupt();
            }
        }
        threads.clear();
        return stillRunning;
    }
}
