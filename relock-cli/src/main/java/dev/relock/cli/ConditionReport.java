package dev.relock.cli;

import dev.relock.RelockCondition;
import java.io.PrintStream;
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
        LockReport.line(text, "lock", condition.lockName());
        LockReport.line(text, "condition", condition.name());
        LockReport.line(text, "kind", KIND);
        List<String> owners = new ArrayList<>();
        for (String owner : waiters) {
            owners.add(LockReport.shortOwner(owner));
        }
        LockReport.line(text, "waiters", owners.isEmpty() ? "none" : String.join(", ", owners));
        out.print(text);
        out.flush();
    }

    // ---- for scripts ------------------------------------------------------------------------

    void json(RelockCondition condition, List<String> waiters) {
        LockReport.jsonObject(out, json -> {
            json.writeStringField("lock", condition.lockName());
            json.writeStringField("condition", condition.name());
            json.writeStringField("kind", KIND);
            json.writeArrayFieldStart("waiters");
            for (String owner : waiters) {
                json.writeString(owner);
            }
            json.writeEndArray();
        });
    }
}
