package dev.relock.bench;

import java.awt.Color;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.style.Styler;

/**
 * The "Scaling past one Redis" section of BENCHMARKS.md, from one {@link Scaling} run: written into a full run's report,
 * or put in place of the section an earlier full run wrote ({@link #splice}) when only this part ran.
 */
final class ScalingReport {

    static final String HEADING = "## Scaling past one Redis";
    /** Redis's default {@code maxclients}. */
    private static final int MAX_CLIENTS = 10_000;

    /** What one run measured, and where and when. */
    record Measured(List<Scaling.ConnectionCount> connections, Scaling.Crowd crowd, Scaling.Holders holders,
            List<Scaling.ClusterSize> cluster, String when, String gitState, double loadBefore, double loadAfter) {
    }

    private final Measured measured;
    private final StringBuilder md = new StringBuilder();

    ScalingReport(Measured measured) {
        this.measured = measured;
    }

    /** The section's markdown, its chart written into {@code charts} (linked as {@code bench/<file>}). */
    String section(Path charts) throws IOException {
        line(HEADING);
        line();
        line(String.format(Locale.ROOT, "*Measured %s (git %s; 1-minute load %.2f before, %.2f after) on private loopback"
                + " servers this run started: `relock-bench/run.sh --only scaling`. Counts (connections, commands,"
                + " messages, memory) do not depend on the machine's load; times and CPU figures do.*",
                measured.when(), measured.gitState(), measured.loadBefore(), measured.loadAfter()));
        line();
        connections();
        crowd();
        holders();
        cluster(charts);
        return md.toString();
    }

    private void connections() {
        line("### Connections per client");
        line();
        line("Two clients of each subject each take and release six locks, wait once in Redis for a lock the other holds"
                + " (\"at rest\"), then run 16 threads of lock+unlock pairs on locks of their own (\"after 16 threads\");"
                + " each figure is the two clients' connections on that server, halved. \"Fleet\" is how many such"
                + " clients one primary admits at Redis's default `maxclients` of 10,000, from its busiest primary after"
                + " 16 threads. A failed subject is left out (see the run's log).");
        line();
        line("| topology | subject | server | at rest | after 16 threads | after close | fleet per primary |");
        line("|---|---|---|---:|---:|---:|---:|");
        Map<String, Double> busiest = new LinkedHashMap<>();
        for (Scaling.ConnectionCount count : measured.connections()) {
            String key = count.topology() + "|" + count.subject();
            if (isPrimary(count.node())) {
                busiest.merge(key, count.afterThreads(), Math::max);
            }
        }
        String last = null;
        for (Scaling.ConnectionCount count : measured.connections()) {
            String key = count.topology() + "|" + count.subject();
            boolean first = !key.equals(last);
            last = key;
            Double most = busiest.get(key);
            String fleet = first && most != null && most > 0 ? String.format(Locale.ROOT, "%,d",
                    (long) Math.floor(MAX_CLIENTS / most)) : "";
            line(String.format(Locale.ROOT, "| %s | %s | %s | %s | %s | %s | %s |", first ? count.topology() : "",
                    first ? count.subject() : "", count.node(), number(count.atRest()), number(count.afterThreads()),
                    number(count.afterClose()), fleet));
        }
        line();
    }

    private static boolean isPrimary(String node) {
        return node.equals("server") || node.startsWith("master") || node.startsWith("node");
    }

    private void crowd() {
        Scaling.Crowd crowd = measured.crowd();
        if (crowd == null) {
            return;
        }
        line(String.format(Locale.ROOT, "### Many waiters: %,d threads on one lock across %d clients", crowd.threads(),
                crowd.clients()));
        line();
        line("A client of its own holds the lock while the waiters come; each then enters, leaves at once, and the next"
                + " follows. A hand-off is the time from one holder calling `unlock()` to the next holder's `lock()`"
                + " returning.");
        line();
        line("| measure | value |");
        line("|---|---:|");
        line(String.format(Locale.ROOT, "| waiters in Redis's queue (`inspect`) | %,d |",
                crowd.queuedInRedis()));
        line(String.format(Locale.ROOT, "| the lock's keys in Redis while they wait (MEMORY USAGE) | %,d B (%,.0f B per waiting thread) |",
                crowd.memoryBytes(), (double) crowd.memoryBytes() / crowd.threads()));
        line(String.format(Locale.ROOT, "| subscribed connections, all clients | %d (%.2f per client) |",
                crowd.subscribedConnections(), (double) crowd.subscribedConnections() / crowd.clients()));
        line(String.format(Locale.ROOT, "| channels subscribed, all clients | %d |", crowd.channels()));
        line(String.format(Locale.ROOT, "| hand-offs within a client: count, p50, p99 | %,d, %s, %s |",
                crowd.sameClient().length, micros(Stats.quantile(crowd.sameClient(), 0.5)),
                micros(Stats.quantile(crowd.sameClient(), 0.99))));
        line(String.format(Locale.ROOT, "| hand-offs to another client: count, p50, p99 | %,d, %s, %s |",
                crowd.acrossClients().length, micros(Stats.quantile(crowd.acrossClients(), 0.5)),
                micros(Stats.quantile(crowd.acrossClients(), 0.99))));
        line(String.format(Locale.ROOT, "| all %,d through | %.2f s |", crowd.threads(), crowd.drainSeconds()));
        line(String.format(Locale.ROOT, "| Redis CPU per hand-off | %.1f µs |", crowd.cpuMicrosPerHandoff()));
        line(String.format(Locale.ROOT, "| commands Redis ran per hand-off (scripts' calls included) | %.2f |",
                crowd.commandsPerHandoff()));
        line();
    }

    private void holders() {
        Scaling.Holders holders = measured.holders();
        if (holders == null) {
            return;
        }
        line(String.format(Locale.ROOT, "### Many holders: %,d locks held across %d clients", holders.locks(),
                holders.clients()));
        line();
        line(String.format(Locale.ROOT, "Default lease (%d s), so each client's lease keeper renews every %d s; what"
                + " Redis did in a window of %.0f s while they were held.", holders.lease().toSeconds(),
                holders.lease().toSeconds() / 3, holders.windowSeconds()));
        line();
        line("| measure | value |");
        line("|---|---:|");
        line(String.format(Locale.ROOT, "| the keys of a held lock in Redis (MEMORY USAGE: hash and fence) | %,.0f B |", holders.memoryBytesPerLock()));
        line(String.format(Locale.ROOT, "| commands per second (scripts' calls included) | %,.1f |",
                holders.commandsPerSecond()));
        line(String.format(Locale.ROOT, "| of them script calls per second | %,.1f |", holders.scriptCallsPerSecond()));
        line(String.format(Locale.ROOT, "| bytes from clients per second | %,.0f |", holders.bytesInPerSecond()));
        line(String.format(Locale.ROOT, "| bytes to clients per second | %,.0f |", holders.bytesOutPerSecond()));
        line(String.format(Locale.ROOT, "| Redis CPU | %.2f %% of a core |", holders.cpuShare() * 100));
        line(String.format(Locale.ROOT, "| leases reported lost | %d |", holders.lost()));
        line();
    }

    private void cluster(Path charts) throws IOException {
        if (measured.cluster().isEmpty()) {
            return;
        }
        line("### Redis Cluster with 1, 2 and 3 masters");
        line();
        line("Uncontended: 16 threads of one client, each running pairs over 32 lock names of its own (512 names over"
                + " the slots); each master's CPU and commands are divided by the pairs whose names its slots hold."
                + " Contended: two clients, 8 threads each, every lock name shared by one thread of each, so releases"
                + " wake or grant the other client; a node's messages are the pub/sub messages it took in over the"
                + " cluster bus (CLUSTER INFO), per release. No replicas.");
        line();
        line("| Redis | masters | uncontended pairs/s | Redis CPU per pair, each master (µs) | commands per pair, each"
                + " master | pub/sub messages in per release, each node | PUBLISH/SPUBLISH per release |");
        line("|---|---:|---:|---|---|---|---:|");
        for (Scaling.ClusterSize size : measured.cluster()) {
            line(String.format(Locale.ROOT, "| %s | %d | %,.0f | %s | %s | %s | %.3f |", size.redisVersion(),
                    size.masters(), size.pairsPerSecond(), list(size.cpuMicrosPerPair(), "%.1f"),
                    list(size.commandsPerPair(), "%.2f"), list(size.messagesPerRelease(), "%.3f"),
                    size.publishesPerRelease()));
        }
        line();
        for (String version : measured.cluster().stream().map(Scaling.ClusterSize::redisVersion).distinct().toList()) {
            List<Scaling.ClusterSize> sizes = measured.cluster().stream()
                    .filter(size -> size.redisVersion().equals(version)).toList();
            double one = mean(sizes.get(0).cpuMicrosPerPair());
            Scaling.ClusterSize largest = sizes.get(sizes.size() - 1);
            line(String.format(Locale.ROOT, "Redis %s: CPU per pair on a master, mean over masters, %d masters against 1:"
                    + " %.2f×; commands per pair on a master %.2f against %.2f.", version, largest.masters(),
                    mean(largest.cpuMicrosPerPair()) / one, mean(largest.commandsPerPair()),
                    mean(sizes.get(0).commandsPerPair())));
            line();
        }
        line("The commands a pair costs its master do not change with the number of masters: each lock's keys share"
                + " a slot, and no script touches another master. Redis CPU per command does: the same 16 threads"
                + " spread over more masters give each fewer commands per read from its connection, and every master"
                + " shares this machine's cores with the others and with the client (so the figure is this"
                + " machine's, not Redis Cluster's). Messages between nodes are the protocol's: on Redis 7 a wake-up"
                + " goes by sharded pub/sub (SPUBLISH) to the lock's own shard (its master, and its replicas where it has"
                + " some) and no other node; on 6.2, which has"
                + " no sharded pub/sub, a PUBLISH on a Cluster is sent to every node over the cluster bus.");
        line();
        String file = "scaling-cluster-cpu.png";
        chart(charts.resolve(file));
        line("![" + file + "](bench/" + file + ")");
        line();
    }

    private void chart(Path file) throws IOException {
        CategoryChart chart = new CategoryChartBuilder().width(900).height(480)
                .title("Redis Cluster: Redis CPU per uncontended pair on each master")
                .xAxisTitle("masters").yAxisTitle("µs per pair (mean over masters)").build();
        chart.getStyler().setLegendPosition(Styler.LegendPosition.OutsideS);
        chart.getStyler().setChartBackgroundColor(Color.WHITE);
        chart.getStyler().setPlotBackgroundColor(Color.WHITE);
        chart.getStyler().setLabelsVisible(true);
        chart.getStyler().setDecimalPattern("#0.0");
        for (String version : measured.cluster().stream().map(Scaling.ClusterSize::redisVersion).distinct().toList()) {
            List<String> masters = new ArrayList<>();
            List<Double> cpu = new ArrayList<>();
            for (Scaling.ClusterSize size : measured.cluster()) {
                if (size.redisVersion().equals(version)) {
                    masters.add(Integer.toString(size.masters()));
                    cpu.add(mean(size.cpuMicrosPerPair()));
                }
            }
            chart.addSeries("Redis " + version, masters, cpu);
        }
        Files.createDirectories(file.getParent());
        BitmapEncoder.saveBitmap(chart, file.toString(), BitmapEncoder.BitmapFormat.PNG);
    }

    /**
     * Puts {@code section} in place of the scaling section of {@code benchmarks} (an earlier full run's report), or
     * before its "## Charts" if it has none, or at its end.
     */
    static void splice(Path benchmarks, String section) throws IOException {
        // no earlier report (a fresh --out directory): the section under the report's title
        String text = Files.exists(benchmarks) ? Files.readString(benchmarks) : "# relock benchmarks\n\n";
        int start = text.indexOf(HEADING + "\n");
        String result;
        if (start >= 0) {
            int end = text.indexOf("\n## ", start + HEADING.length());
            result = text.substring(0, start) + section + (end < 0 ? "" : text.substring(end + 1));
        } else {
            int charts = text.indexOf("## Charts\n");
            result = charts < 0 ? text + "\n" + section : text.substring(0, charts) + section + text.substring(charts);
        }
        Files.writeString(benchmarks, result);
    }

    private static double mean(double[] values) {
        double sum = 0;
        for (double value : values) {
            sum += value;
        }
        return values.length == 0 ? Double.NaN : sum / values.length;
    }

    private static String list(double[] values, String format) {
        List<String> parts = new ArrayList<>();
        for (double value : values) {
            parts.add(String.format(Locale.ROOT, format, value));
        }
        return String.join(", ", parts);
    }

    private static String number(double value) {
        return value == Math.rint(value) ? String.format(Locale.ROOT, "%.0f", value)
                : String.format(Locale.ROOT, "%.1f", value);
    }

    private static String micros(double value) {
        return Double.isNaN(value) ? "–" : value >= 1000 ? String.format(Locale.ROOT, "%.2f ms", value / 1000)
                : String.format(Locale.ROOT, "%.0f µs", value);
    }

    private void line(String text) {
        md.append(text).append('\n');
    }

    private void line() {
        md.append('\n');
    }
}
