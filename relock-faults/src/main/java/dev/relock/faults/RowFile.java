package dev.relock.faults;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.io.IOException;
import java.lang.reflect.RecordComponent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The report's rows as data, beside it ({@code reliability/rows.tsv}), so that a run of some scenarios
 * ({@code --only}) replaces their rows and keeps the others, each with the commit it was measured at. One row a line,
 * tab-separated: the scenario's name, the {@link ReliabilityReport.Measurement}'s fields, the servers, then the
 * {@link Findings}' components in declaration order (nested records flattened). A line written by another version of
 * {@link Findings} (another number of fields) or naming a scenario the campaign no longer has is dropped, with a note
 * on standard error: that row must be measured again.
 */
final class RowFile {

    private RowFile() {
    }

    /** Where the rows of the report {@code report} are kept. */
    static Path beside(Path report) {
        return report.toAbsolutePath().getParent().resolve("reliability/rows.tsv");
    }

    /** The rows kept in {@code file}, none if it does not exist. */
    static List<ReliabilityReport.Row> read(Path file) throws IOException {
        List<ReliabilityReport.Row> rows = new ArrayList<>();
        if (!Files.exists(file)) {
            return rows;
        }
        Map<String, Scenario<?>> scenarios = new LinkedHashMap<>();
        Scenario.all().forEach(s -> scenarios.put(s.name(), s));
        List<String> lines = Files.readAllLines(file, UTF_8);
        for (int i = 0; i < lines.size(); i++) {
            Iterator<String> fields = Arrays.asList(lines.get(i).split("\t", -1)).iterator();
            Scenario<?> scenario = scenarios.get(fields.next());
            try {
                if (scenario == null) {
                    throw new IllegalArgumentException("no such scenario");
                }
                ReliabilityReport.Measurement measured = decode(ReliabilityReport.Measurement.class, fields);
                String servers = fields.next();
                Findings findings = decode(Findings.class, fields);
                if (fields.hasNext()) {
                    throw new IllegalArgumentException("more fields than a row has");
                }
                rows.add(new ReliabilityReport.Row(scenario, servers, findings, measured));
            } catch (RuntimeException e) { // too few fields, a number that is none, a scenario gone
                System.err.println(file + ":" + (i + 1) + ": row dropped, measure it again (" + e + ")");
            }
        }
        return rows;
    }

    /** Writes {@code rows} to {@code file}, replacing it. */
    static void write(Path file, List<ReliabilityReport.Row> rows) throws IOException {
        Files.createDirectories(file.toAbsolutePath().getParent());
        List<String> lines = new ArrayList<>();
        for (ReliabilityReport.Row row : rows) {
            List<String> fields = new ArrayList<>(List.of(row.scenario().name()));
            encode(row.measured(), fields);
            fields.add(row.servers());
            encode(row.findings(), fields);
            lines.add(String.join("\t", fields));
        }
        Files.write(file, lines, UTF_8);
    }

    /**
     * {@code kept} with each row of {@code measured} in place of the kept row of its scenario, in the campaign's
     * order of scenarios.
     */
    static List<ReliabilityReport.Row> merge(List<ReliabilityReport.Row> kept, List<ReliabilityReport.Row> measured) {
        Map<String, ReliabilityReport.Row> byName = new LinkedHashMap<>();
        kept.forEach(row -> byName.put(row.scenario().name(), row));
        measured.forEach(row -> byName.put(row.scenario().name(), row));
        return Scenario.all().stream().map(s -> byName.get(s.name())).filter(row -> row != null).toList();
    }

    private static void encode(Record record, List<String> fields) {
        for (RecordComponent component : record.getClass().getRecordComponents()) {
            Object value = get(component, record);
            if (value instanceof Record nested) {
                encode(nested, fields);
            } else {
                String text = String.valueOf(value);
                if (text.contains("\t") || text.contains("\n")) {
                    throw new IllegalArgumentException(component.getName() + " has a tab or a line break: " + text);
                }
                fields.add(text);
            }
        }
    }

    private static <R extends Record> R decode(Class<R> type, Iterator<String> fields) {
        RecordComponent[] components = type.getRecordComponents();
        Object[] values = new Object[components.length];
        Class<?>[] types = new Class<?>[components.length];
        for (int i = 0; i < components.length; i++) {
            types[i] = components[i].getType();
            values[i] = decodeValue(types[i], fields);
        }
        try {
            return type.getDeclaredConstructor(types).newInstance(values);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot build a " + type.getSimpleName(), e);
        }
    }

    @SuppressWarnings("unchecked")
    private static Object decodeValue(Class<?> type, Iterator<String> fields) {
        if (type.isRecord()) {
            return decode((Class<? extends Record>) type, fields);
        }
        String text = fields.next();
        if (type == int.class) {
            return Integer.parseInt(text);
        }
        if (type == long.class) {
            return Long.parseLong(text);
        }
        if (type == String.class) {
            return text;
        }
        throw new IllegalStateException("a row has no field of type " + type);
    }

    private static Object get(RecordComponent component, Record record) {
        try {
            return component.getAccessor().invoke(record);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot read " + component.getName(), e);
        }
    }
}
