package dev.relock.bench;

import java.awt.Color;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;
import org.HdrHistogram.Histogram;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.CategorySeries;
import org.knowm.xchart.style.Styler;

/** PNG charts for the report, drawn with XChart. */
final class Charts {

    private static final Map<String, Color> FAMILY_COLORS = Map.of(
            "relock", new Color(0x2e7d32),
            "redisson3", new Color(0xc62828),
            "redisson4", new Color(0xef6c00),
            "spring", new Color(0x1565c0),
            "floor", new Color(0x616161),
            "diagnostic", new Color(0x9e9e9e));

    private static final String[] PERCENTILE_NAMES = {"p50", "p90", "p99", "p99.9"};
    private static final double[] PERCENTILES = {50, 90, 99, 99.9};

    /** Median throughput of every subject that ran, one bar each, coloured by maker. */
    static void throughput(Results.Scenario scenario, String unit, Path file) throws IOException {
        bars(scenario, scenario.id + ": " + scenario.title + " (median of repeats)", unit, "#,###",
                Results.SubjectRuns::median, file);
    }

    /** Redis CPU per operation of every subject that ran (all repeats), one bar each, coloured by maker. */
    static void serverCpu(Results.Scenario scenario, String unit, Path file) throws IOException {
        bars(scenario, scenario.id + ": Redis CPU per " + unit + " (all repeats)", "µs of Redis CPU per " + unit,
                "#,##0.0", s -> s.cpuPerOp(true), file);
    }

    private static void bars(Results.Scenario scenario, String title, String unit, String pattern,
            ToDoubleFunction<Results.SubjectRuns> figure, Path file) throws IOException {
        List<Results.SubjectRuns> ran = scenario.subjects.stream()
                .filter(s -> s.ok() && !Double.isNaN(figure.applyAsDouble(s))).toList();
        if (ran.isEmpty()) {
            return;
        }
        CategoryChart chart = new CategoryChartBuilder().width(1100).height(560).title(title).yAxisTitle(unit).build();
        style(chart);
        chart.getStyler().setOverlapped(true);
        chart.getStyler().setLabelsVisible(true);
        chart.getStyler().setLabelsRotation(0);
        chart.getStyler().setYAxisDecimalPattern(pattern);
        chart.getStyler().setDecimalPattern(pattern);
        chart.getStyler().setXAxisLabelRotation(20);
        List<String> labels = ran.stream().map(s -> shortLabel(s.label, s.family)).toList();
        Map<String, List<Double>> byFamily = new LinkedHashMap<>();
        for (Results.SubjectRuns s : ran) {
            byFamily.computeIfAbsent(s.family, f -> new ArrayList<>());
        }
        for (Map.Entry<String, List<Double>> family : byFamily.entrySet()) {
            for (Results.SubjectRuns s : ran) {
                // null, not 0: no bar and no "0" label in the other families' slots
                family.getValue().add(s.family.equals(family.getKey()) ? figure.applyAsDouble(s) : null);
            }
        }
        List<Color> colors = new ArrayList<>();
        for (Map.Entry<String, List<Double>> family : byFamily.entrySet()) {
            chart.addSeries(familyName(family.getKey()), labels, family.getValue());
            colors.add(FAMILY_COLORS.getOrDefault(family.getKey(), Color.DARK_GRAY));
        }
        chart.getStyler().setSeriesColors(colors.toArray(Color[]::new));
        save(chart, file);
    }

    /** Handoff latency percentiles (µs, log scale) per subject. */
    static void handoff(Results.Scenario scenario, Path file) throws IOException {
        List<Results.SubjectRuns> ran = scenario.subjects.stream()
                .filter(s -> s.ok() && s.handoff().getTotalCount() > 0).toList();
        if (ran.isEmpty()) {
            return;
        }
        CategoryChart chart = new CategoryChartBuilder().width(1100).height(560)
                .title(scenario.id + ": handoff latency, release call to the next holder's acquire (all repeats)")
                .xAxisTitle("percentile").yAxisTitle("µs (log scale)").build();
        style(chart);
        // lines, not bars: XChart's bars start at zero, which a logarithmic axis cannot show
        chart.getStyler().setDefaultSeriesRenderStyle(CategorySeries.CategorySeriesRenderStyle.Line);
        chart.getStyler().setOverlapped(true); // every series on the same x positions
        chart.getStyler().setYAxisLogarithmic(true);
        chart.getStyler().setYAxisDecimalPattern("#,###");
        chart.getStyler().setLegendPosition(Styler.LegendPosition.OutsideE);
        chart.getStyler().setLegendLayout(Styler.LegendLayout.Vertical);
        List<Color> colors = new ArrayList<>();
        double lowest = Double.MAX_VALUE;
        for (Results.SubjectRuns s : ran) {
            Histogram h = s.handoff();
            List<Double> values = new ArrayList<>();
            for (double p : PERCENTILES) {
                double micros = Math.max(1, h.getValueAtPercentile(p) / 1e3);
                values.add(micros);
                lowest = Math.min(lowest, micros);
            }
            chart.addSeries(shortLabel(s.label, s.family), List.of(PERCENTILE_NAMES), values);
            colors.add(shade(FAMILY_COLORS.getOrDefault(s.family, Color.DARK_GRAY), s.label));
        }
        chart.getStyler().setYAxisMin(Math.pow(10, Math.floor(Math.log10(lowest))));
        chart.getStyler().setSeriesColors(colors.toArray(Color[]::new));
        save(chart, file);
    }

    /** S4: heap bytes per held lock per subject and lock count. */
    static void heldHeap(List<Results.Held> held, Path file) throws IOException {
        List<Results.Held> ok = held.stream().filter(h -> h.error == null).toList();
        if (ok.isEmpty()) {
            return;
        }
        List<String> labels = new ArrayList<>();
        for (Results.Held h : ok) {
            String label = shortLabel(h.label, h.family);
            if (!labels.contains(label)) {
                labels.add(label);
            }
        }
        CategoryChart chart = new CategoryChartBuilder().width(1100).height(560)
                .title("S4: retained heap per held lock (watchdog on)").yAxisTitle("bytes per held lock").build();
        style(chart);
        chart.getStyler().setLabelsVisible(true);
        chart.getStyler().setDecimalPattern("#,###");
        chart.getStyler().setYAxisDecimalPattern("#,###");
        for (int count : ok.stream().map(h -> h.locks).distinct().sorted().toList()) {
            List<Double> values = new ArrayList<>();
            for (String label : labels) {
                values.add(ok.stream().filter(h -> h.locks == count && shortLabel(h.label, h.family).equals(label))
                        .mapToDouble(h -> Math.max(0, h.heapBytesPerLock)).findFirst().orElse(0));
            }
            chart.addSeries(String.format("%,d locks", count), labels, values);
        }
        save(chart, file);
    }

    static String shortLabel(String label, String family) {
        return switch (family) {
            case "relock" -> "relock";
            case "redisson3", "redisson4" -> label.replaceFirst("Redisson (\\d+)\\.(\\d+)\\.\\d+ ", "Redisson $1.$2 ");
            case "spring" -> label.replaceFirst("Spring RedisLockRegistry (\\d+)\\.(\\d+)\\.\\d+ ", "Spring $1.$2 ");
            case "floor" -> "floor";
            default -> "relock scripts (diag.)";
        };
    }

    private static String familyName(String family) {
        return switch (family) {
            case "redisson3" -> "Redisson 3.x";
            case "redisson4" -> "Redisson 4.x";
            case "spring" -> "Spring Integration";
            case "diagnostic" -> "diagnostic";
            default -> family;
        };
    }

    /** Spring Integration 6.x in the per-subject charts: its family's colour is 7.x's. */
    private static final Color SPRING_6 = new Color(0x00838f);

    private static Color shade(Color base, String label) {
        if (label.startsWith("Spring RedisLockRegistry 6.")) {
            base = SPRING_6;
        }
        if (label.contains("RFair") || label.contains("PUB_SUB")) {
            return base.darker();
        }
        if (label.contains("RFenced")) {
            return base.brighter();
        }
        return base;
    }

    private static void style(CategoryChart chart) {
        chart.getStyler().setLegendPosition(Styler.LegendPosition.OutsideS);
        chart.getStyler().setLegendLayout(Styler.LegendLayout.Horizontal);
        chart.getStyler().setChartBackgroundColor(Color.WHITE);
        chart.getStyler().setPlotBackgroundColor(Color.WHITE);
        chart.getStyler().setAntiAlias(true);
    }

    private static void save(CategoryChart chart, Path file) throws IOException {
        Files.createDirectories(file.getParent());
        BitmapEncoder.saveBitmap(chart, file.toString(), BitmapEncoder.BitmapFormat.PNG);
    }

    private Charts() {
    }
}
