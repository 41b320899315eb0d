package dev.relock.faults;

import java.util.Arrays;
import java.util.List;

/** Synthetic histories for the checkers' tests. */
final class Histories {

    private Histories() {
    }

    /**
     * Events written with spaces between the fields: nanos, worker, kind, token and an optional detail, which is the
     * rest of the line and may hold spaces ({@code "100 w1.2 ACQUIRED 7 campaign read"}).
     */
    static List<HistoryEvent> events(String... spacedLines) {
        return Arrays.stream(spacedLines).map(spaced -> {
            String[] fields = spaced.split(" ", 5);
            return new HistoryEvent(Long.parseLong(fields[0]), fields[1], EventKind.valueOf(fields[2]),
                    Long.parseLong(fields[3]), fields.length == 5 ? fields[4] : "");
        }).toList();
    }

    static Findings check(String... spacedLines) {
        return HistoryChecker.check(events(spacedLines));
    }
}
