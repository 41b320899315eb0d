package dev.relock.cli.demo;

import java.util.Arrays;

/**
 * The distribution of a set of durations, in microseconds, by nearest rank.
 *
 * @param count how many were measured (0: the others are 0 too)
 */
public record Latencies(int count, long p50Micros, long p99Micros, long maxMicros) {

    static final Latencies NONE = new Latencies(0, 0, 0, 0);

    /** Sorts {@code micros} in place and reads off the percentiles. */
    static Latencies of(long[] micros) {
        if (micros.length == 0) {
            return NONE;
        }
        Arrays.sort(micros);
        return new Latencies(micros.length, rank(micros, 0.50), rank(micros, 0.99), micros[micros.length - 1]);
    }

    private static long rank(long[] sorted, double fraction) {
        int index = (int) Math.ceil(fraction * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, index))];
    }
}
