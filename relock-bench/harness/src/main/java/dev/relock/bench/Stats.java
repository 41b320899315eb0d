package dev.relock.bench;

import java.util.Arrays;
import java.util.List;
import org.HdrHistogram.Histogram;

/** Small numeric helpers shared by the scenarios and the report. */
final class Stats {

    /** Latencies up to one minute, in nanoseconds, 3 significant digits. */
    static Histogram newHistogram() {
        return new Histogram(60_000_000_000L, 3);
    }

    static void record(Histogram histogram, long nanos) {
        histogram.recordValue(Math.max(0, Math.min(nanos, histogram.getHighestTrackableValue())));
    }

    static double median(List<Double> values) {
        double[] sorted = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        if (sorted.length == 0) {
            return Double.NaN;
        }
        int mid = sorted.length / 2;
        return sorted.length % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
    }

    static double min(List<Double> values) {
        return values.stream().mapToDouble(Double::doubleValue).min().orElse(Double.NaN);
    }

    static double max(List<Double> values) {
        return values.stream().mapToDouble(Double::doubleValue).max().orElse(Double.NaN);
    }

    static double medianOf(double... values) {
        return median(Arrays.stream(values).boxed().toList());
    }

    /** The {@code q} quantile (0..1) of {@code values} by the nearest rank; NaN if there are none. */
    static double quantile(double[] values, double q) {
        if (values.length == 0) {
            return Double.NaN;
        }
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        int rank = (int) Math.ceil(q * sorted.length);
        return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
    }

    private Stats() {
    }
}
