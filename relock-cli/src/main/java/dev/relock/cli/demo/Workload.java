package dev.relock.cli.demo;

import java.time.Duration;
import java.util.Objects;

/**
 * What one run of the engine does: {@code workers} processes of {@code threadsPerWorker} threads
 * each contend for {@code locks} locks for {@code duration}.
 */
public record Workload(int workers, int threadsPerWorker, int locks, Duration duration) {

    public static final int MAX_WORKERS = 64;
    public static final int MAX_THREADS = 64;
    public static final int MAX_LOCKS = 1000;

    /** @throws IllegalArgumentException if a count or the duration is out of range */
    public Workload {
        Objects.requireNonNull(duration, "duration");
        requireInRange(workers, MAX_WORKERS, "workers");
        requireInRange(threadsPerWorker, MAX_THREADS, "threads per worker");
        requireInRange(locks, MAX_LOCKS, "locks");
        requireDuration(duration, "the duration");
    }

    /** @throws IllegalArgumentException "{@code what} must be 1 to {@code max}, was ..." */
    public static void requireInRange(int value, int max, String what) {
        if (value < 1 || value > max) {
            throw new IllegalArgumentException(what + " must be 1 to " + max + ", was " + value);
        }
    }

    /** @throws IllegalArgumentException if shorter than 100 ms: too short to measure anything */
    public static void requireDuration(Duration duration, String what) {
        if (duration.toMillis() < 100) {
            throw new IllegalArgumentException(what + " must be at least 100ms, was " + duration.toMillis() + "ms");
        }
    }

    int threads() {
        return workers * threadsPerWorker;
    }
}
