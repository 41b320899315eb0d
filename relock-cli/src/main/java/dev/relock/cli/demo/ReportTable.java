package dev.relock.cli.demo;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;

/**
 * The results of one or more phases as a table for people: one row per measure, one column per
 * phase, so the run with the lock and the run without it stand side by side.
 *
 * <pre>
 *                                  with lock  without lock
 * acquisitions                         5,130             -
 * increments (GET then SET)            5,130        61,877
 * throughput                         1,026/s      12,375/s
 * ...
 * lost updates                             0 41,238 (67%)
 * fencing-order violations                 0             -
 * </pre>
 */
public final class ReportTable {

    private static final String NONE = "-";

    /** The table, lines ending in '\n', followed by a note for anything unusual. */
    public static String render(List<RunResult> results) {
        List<String[]> rows = new ArrayList<>();
        String[] header = new String[results.size() + 1];
        header[0] = "";
        for (int i = 0; i < results.size(); i++) {
            header[i + 1] = results.get(i).locked() ? "with lock" : "without lock";
        }
        rows.add(header);
        rows.add(row("acquisitions", results, r -> r.locked() ? count(r.increments()) : NONE));
        rows.add(row("increments (GET then SET)", results, r -> count(r.increments())));
        rows.add(row("throughput", results,
                r -> String.format(Locale.ROOT, "%,.0f/s", r.throughputPerSecond())));
        rows.add(row("acquire wait p50", results, r -> latency(r, r.acquireWait(), Latencies::p50Micros)));
        rows.add(row("acquire wait p99", results, r -> latency(r, r.acquireWait(), Latencies::p99Micros)));
        rows.add(row("acquire wait max", results, r -> latency(r, r.acquireWait(), Latencies::maxMicros)));
        rows.add(row("handoff latency p50", results, r -> latency(r, r.handoff(), Latencies::p50Micros)));
        rows.add(row("handoff latency p99", results, r -> latency(r, r.handoff(), Latencies::p99Micros)));
        rows.add(row("fairness: min / max per worker", results,
                r -> count(r.fewestPerWorker()) + " / " + count(r.mostPerWorker())));
        rows.add(row("lost updates", results, ReportTable::lostUpdates));
        rows.add(row("fencing-order violations", results,
                r -> r.locked() ? count(r.fencingViolations()) : NONE));

        int[] widths = new int[header.length];
        for (String[] row : rows) {
            for (int i = 0; i < row.length; i++) {
                widths[i] = Math.max(widths[i], row[i].length());
            }
        }
        StringBuilder out = new StringBuilder();
        for (String[] row : rows) {
            out.append(pad(row[0], -widths[0]));
            for (int i = 1; i < row.length; i++) {
                out.append("  ").append(pad(row[i], widths[i]));
            }
            out.append('\n');
        }
        for (RunResult result : results) {
            if (result.leasesLost() > 0) {
                out.append(String.format(Locale.ROOT, "note: %,d holds lost their lease before release"
                        + " (a pause longer than the lease, or Redis lost the keys)%n", result.leasesLost()));
            }
            if (result.overlappingHolds() > 0) {
                out.append(String.format(Locale.ROOT, "note: %,d holds overlapped the previous hold of their lock"
                        + " by this host's clock (mutual exclusion broke, or the clock was stepped)%n",
                        result.overlappingHolds()));
            }
        }
        return out.toString();
    }

    private static String[] row(String label, List<RunResult> results, Function<RunResult, String> cell) {
        String[] row = new String[results.size() + 1];
        row[0] = label;
        for (int i = 0; i < results.size(); i++) {
            row[i + 1] = cell.apply(results.get(i));
        }
        return row;
    }

    private static String lostUpdates(RunResult result) {
        long lost = result.lostUpdates();
        if (lost == 0 || result.increments() == 0) {
            return count(lost);
        }
        return count(lost) + String.format(Locale.ROOT, " (%.0f%%)", 100.0 * lost / result.increments());
    }

    private static String latency(RunResult result, Latencies latencies, Function<Latencies, Long> pick) {
        return result.locked() && latencies.count() > 0 ? duration(pick.apply(latencies)) : NONE;
    }

    /** Microseconds as people read them: 0.42 ms, 12.3 ms, 250 ms, 1.25 s. */
    static String duration(long micros) {
        double millis = micros / 1000.0;
        if (millis < 10) {
            return String.format(Locale.ROOT, "%.2f ms", millis);
        }
        if (millis < 100) {
            return String.format(Locale.ROOT, "%.1f ms", millis);
        }
        if (millis < 1000) {
            return String.format(Locale.ROOT, "%.0f ms", millis);
        }
        return String.format(Locale.ROOT, "%.2f s", millis / 1000);
    }

    static String count(long value) {
        return String.format(Locale.ROOT, "%,d", value);
    }

    /** Right-aligned to {@code width}, or left-aligned to {@code -width}. */
    private static String pad(String text, int width) {
        String fill = " ".repeat(Math.max(0, Math.abs(width) - text.length()));
        return width < 0 ? text + fill : fill + text;
    }

    private ReportTable() {}
}
