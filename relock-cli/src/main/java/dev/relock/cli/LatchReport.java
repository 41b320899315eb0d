package dev.relock.cli;

import dev.relock.LatchInfo;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;

/**
 * A {@link LatchInfo} written as {@link LockReport} writes a lock: "key: value" lines for people, one JSON object
 * on one line (UTF-8, Jackson's streaming generator) for scripts.
 *
 * <p>JSON fields: {@code name}, {@code kind} ({@code "latch"}), {@code count} (0 when never set, opened or
 * expired), {@code set} (whether Redis has the latch), {@code expiresInMillis} (0 when not set), {@code
 * waitingClients} (array of full client ids, sorted).
 */
final class LatchReport {

    static final String KIND = "latch";

    private final PrintStream out;

    LatchReport(PrintStream out) {
        this.out = out;
    }

    /** {@code 0a1b2c3d} for a client id of 32 hex digits: as {@link LockReport#shortOwner} shortens an owner's. */
    static String shortClient(String clientId) {
        return clientId.length() <= 8 ? clientId : clientId.substring(0, 8);
    }

    // ---- for people -------------------------------------------------------------------------

    void details(LatchInfo latch) {
        StringBuilder text = new StringBuilder();
        LockReport.line(text, "name", latch.name());
        LockReport.line(text, "kind", KIND);
        LockReport.line(text, "state", latch.set() ? "set" : "not set");
        LockReport.line(text, "count", Long.toString(latch.count()));
        if (latch.set()) {
            LockReport.line(text, "expires in", Durations.format(latch.expiresIn())
                    + " (" + latch.expiresIn().toMillis() + " ms)");
        }
        List<String> waiting = new ArrayList<>();
        for (String client : latch.waitingClients()) {
            waiting.add(shortClient(client));
        }
        LockReport.line(text, "waiting clients", waiting.isEmpty() ? "none" : String.join(", ", waiting));
        out.print(text);
        out.flush();
    }

    // ---- for scripts ------------------------------------------------------------------------

    void json(LatchInfo latch) {
        LockReport.jsonObject(out, json -> {
            json.writeStringField("name", latch.name());
            json.writeStringField("kind", KIND);
            json.writeNumberField("count", latch.count());
            json.writeBooleanField("set", latch.set());
            json.writeNumberField("expiresInMillis", Durations.millis(latch.expiresIn()));
            json.writeArrayFieldStart("waitingClients");
            for (String client : latch.waitingClients()) {
                json.writeString(client);
            }
            json.writeEndArray();
        });
    }
}
