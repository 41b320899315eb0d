package dev.relock.cli;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import dev.relock.RelockCondition;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The waiters of a {@link RelockCondition} written as {@link LockReport} writes a lock: "key: value" lines for
 * people, one JSON object on one line (UTF-8, Jackson's streaming generator) for scripts. Waiters keep the order
 * Redis has them in, longest waiting first.
 *
 * <p>JSON fields: {@code lock} (the lock's name), {@code condition} (the condition's name), {@code kind}
 * ({@code "condition"}), {@code waiters} (array of full owner ids, {@code <client id>:<thread id>}).
 */
final class ConditionReport {

    static final String KIND = "condition";

    private final PrintStream out;

    ConditionReport(PrintStream out) {
        this.out = out;
    }

    // ---- for people -------------------------------------------------------------------------

    void details(RelockCondition condition, List<String> waiters) {
        StringBuilder text = new StringBuilder();
        line(text, "lock", condition.lockName());
        line(text, "condition", condition.name());
        line(text, "kind", KIND);
        List<String> owners = new ArrayList<>();
        for (String owner : waiters) {
            owners.add(LockReport.shortOwner(owner));
        }
        line(text, "waiters", owners.isEmpty() ? "none" : String.join(", ", owners));
        out.print(text);
        out.flush();
    }

    private static void line(StringBuilder text, String key, String value) {
        text.append(key).append(": ").append(value).append(System.lineSeparator());
    }

    // ---- for scripts ------------------------------------------------------------------------

    void json(RelockCondition condition, List<String> waiters) {
        try (JsonGenerator json = new JsonFactory()
                .disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET)
                .createGenerator((OutputStream) out, JsonEncoding.UTF8)) {
            json.writeStartObject();
            json.writeStringField("lock", condition.lockName());
            json.writeStringField("condition", condition.name());
            json.writeStringField("kind", KIND);
            json.writeArrayFieldStart("waiters");
            for (String owner : waiters) {
                json.writeString(owner);
            }
            json.writeEndArray();
            json.writeEndObject();
            json.writeRaw('\n');
        } catch (IOException e) {
            throw new UncheckedIOException("writing JSON to stdout failed", e);
        }
        out.flush();
    }
}
