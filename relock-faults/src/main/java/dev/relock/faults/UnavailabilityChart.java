package dev.relock.faults;

import java.awt.Color;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.style.Styler;

/** The report's chart: the longest unavailability of each scenario, one bar each, drawn with XChart. */
final class UnavailabilityChart {

    private UnavailabilityChart() {
    }

    /** Writes the chart as a PNG to {@code file}, creating its directory. */
    static void write(List<ReliabilityReport.Row> rows, Path file) throws IOException {
        write(rows.stream().map(row -> row.scenario().name()).toList(),
                rows.stream().map(row -> row.findings().maxUnavailableNanos() / 1e6).toList(), file);
    }

    /** Writes one bar per name, {@code millis} in the same order. */
    static void write(List<String> names, List<Double> millis, Path file) throws IOException {
        if (names.isEmpty()) {
            return;
        }
        Files.createDirectories(file.toAbsolutePath().getParent());
        // the scenario names stand upright under their bars: rotated less, the long ones ran off the image's edge
        CategoryChart chart = new CategoryChartBuilder().width(1100).height(900)
                .title("Longest time with a worker waiting and nobody holding the lock, by fault")
                .yAxisTitle("ms").build();
        Styler styler = chart.getStyler();
        styler.setLegendVisible(false);
        styler.setChartBackgroundColor(Color.WHITE);
        styler.setPlotBackgroundColor(Color.WHITE);
        chart.getStyler().setXAxisLabelRotation(90);
        chart.getStyler().setLabelsVisible(true);
        chart.getStyler().setLabelsRotation(0);
        chart.getStyler().setDecimalPattern("#,###");
        chart.getStyler().setYAxisDecimalPattern("#,###");
        chart.getStyler().setSeriesColors(new Color[] {new Color(0x2e7d32)});
        chart.addSeries("max unavailable", names, millis);
        BitmapEncoder.saveBitmap(chart, file.toString(), BitmapEncoder.BitmapFormat.PNG);
    }
}
