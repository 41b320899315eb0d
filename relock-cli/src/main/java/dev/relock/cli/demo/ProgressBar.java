package dev.relock.cli.demo;

import java.io.PrintWriter;
import java.util.Locale;

/**
 * One line on a terminal, redrawn in place with a carriage return:
 * <pre>  with lock     [##########..........]  2.5/5.0 s  5,120 increments  2,048/s</pre>
 * Plain ASCII, so it reads the same whatever the terminal's encoding.
 */
final class ProgressBar implements Progress {

    private static final int WIDTH = 24;

    private final PrintWriter err;
    private int lastLength;

    ProgressBar(PrintWriter err) {
        this.err = err;
    }

    @Override
    public void step(String what) {
        draw("  " + what + " ...");
    }

    @Override
    public void update(String phase, long elapsedNanos, long totalNanos, long increments) {
        double fraction = Math.min(1, totalNanos == 0 ? 1 : (double) elapsedNanos / totalNanos);
        int filled = (int) Math.round(fraction * WIDTH);
        double seconds = elapsedNanos / 1e9;
        String bar = "#".repeat(filled) + ".".repeat(WIDTH - filled);
        draw(String.format(Locale.ROOT, "  %-13s [%s] %4.1f/%.1f s  %,d increments  %,.0f/s", phase, bar,
                Math.min(seconds, totalNanos / 1e9), totalNanos / 1e9, increments,
                seconds > 0 ? increments / seconds : 0.0));
    }

    @Override
    public void finish() {
        draw("");
    }

    private void draw(String line) {
        // pad over the rest of a longer previous line
        err.print('\r' + line + " ".repeat(Math.max(0, lastLength - line.length())) + (line.isEmpty() ? "\r" : ""));
        err.flush();
        lastLength = line.length();
    }
}
