package dev.relock.cli.demo;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Reads the table {@link ReportTable} prints back into label → cells, for assertions. */
public final class TableRows {

    /** The rows of the table in {@code output}: the label, then one cell per column (at least two spaces apart). */
    public static Map<String, List<String>> parse(String output) {
        Map<String, List<String>> rows = new LinkedHashMap<>();
        for (String line : output.lines().toList()) {
            String[] cells = line.strip().split(" {2,}");
            if (cells.length >= 2 && !line.startsWith(" ")) {
                rows.put(cells[0], Arrays.asList(cells).subList(1, cells.length));
            }
        }
        return rows;
    }

    /** The number at the start of a cell: "6,714 (55%)" → 6714. */
    public static long number(String cell) {
        return Long.parseLong(cell.split(" ")[0].replace(",", ""));
    }

    private TableRows() {}
}
