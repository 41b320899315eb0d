package dev.relock.cli;

import java.time.Duration;
import java.time.temporal.ChronoUnit;

/** Durations as people read them: {@code 850ms}, {@code 29.5s}, {@code 12m30s}, {@code 3h02m}. */
final class Durations {

    /** What {@link dev.relock.LockInfo#remainingLease()} reports for a key without expiry. */
    static boolean isForever(Duration duration) {
        return duration.compareTo(ChronoUnit.FOREVER.getDuration().dividedBy(2)) >= 0;
    }

    /** Milliseconds for JSON; -1 (as PTTL says it) for a key without expiry. */
    static long millis(Duration duration) {
        return isForever(duration) ? -1 : duration.toMillis();
    }

    static String format(Duration duration) {
        if (isForever(duration)) {
            return "no expiry";
        }
        long millis = duration.toMillis();
        if (millis < 1_000) {
            return millis + "ms";
        }
        if (millis < 60_000) {
            long tenths = (millis + 50) / 100;
            return tenths % 10 == 0 ? tenths / 10 + "s" : tenths / 10 + "." + tenths % 10 + "s";
        }
        long seconds = millis / 1_000;
        if (seconds < 3_600) {
            return seconds % 60 == 0 ? seconds / 60 + "m" : String.format("%dm%02ds", seconds / 60, seconds % 60);
        }
        long minutes = seconds / 60;
        if (minutes < 24 * 60) {
            return minutes % 60 == 0 ? minutes / 60 + "h" : String.format("%dh%02dm", minutes / 60, minutes % 60);
        }
        long hours = minutes / 60;
        return hours % 24 == 0 ? hours / 24 + "d" : hours / 24 + "d" + hours % 24 + "h";
    }

    private Durations() {}
}
