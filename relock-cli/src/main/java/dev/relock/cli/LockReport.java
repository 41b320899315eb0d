package dev.relock.cli;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import dev.relock.ClientIdentity;
import dev.relock.HolderIdentity;
import dev.relock.LockInfo;
import dev.relock.LockKind;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.Charset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * {@link LockInfo}s written for people (a table, or "key: value" lines) and for scripts (JSON,
 * one object per line, UTF-8, written by Jackson's streaming generator).
 *
 * <p>JSON fields: {@code name}, {@code kind}, ({@code held} for one lock,) {@code holders} (array
 * of {@code {owner, holds}} with full owner ids, and {@code application, host, pid, label, thread} where the
 * holding client's identity record names them), {@code leaseMillis} (-1 for a key without
 * expiry), {@code fencingToken} (0 when free), {@code waiters}.
 */
final class LockReport {

    private final PrintStream out;
    private final String times;

    LockReport(PrintStream out) {
        this.out = out;
        this.times = outputCharset().newEncoder().canEncode('×') ? "×" : "x";
    }

    /** {@code 0a1b2c3d:1} for {@code 0a1b2c3d…(32 hex digits):1}: client id shortened, thread id kept. */
    static String shortOwner(String owner) {
        int colon = owner.lastIndexOf(':');
        if (colon <= 8) {
            return owner;
        }
        return owner.substring(0, 8) + owner.substring(colon);
    }

    // ---- for people -------------------------------------------------------------------------

    void table(List<LockInfo> locks) {
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"NAME", "KIND", "HOLDERS", "LEASE LEFT", "TOKEN", "WAITERS"});
        for (LockInfo lock : locks) {
            List<String> holders = new ArrayList<>();
            for (Map.Entry<String, Integer> holder : sorted(lock.holders()).entrySet()) {
                HolderIdentity named = lock.identities().get(holder.getKey());
                holders.add(shortOwner(holder.getKey()) + times + holder.getValue() + (named == null ? "" : who(named)));
            }
            String kind = lock.kind() == LockKind.SEMAPHORE
                    ? lock.kind().label() + "/" + lock.permits() : lock.kind().label();
            rows.add(new String[] {
                lock.name(), kind, String.join(",", holders), Durations.format(lock.remainingLease()),
                Long.toString(lock.fencingToken()), Integer.toString(lock.waiters())});
        }
        int[] widths = new int[rows.get(0).length];
        for (String[] row : rows) {
            for (int i = 0; i < row.length; i++) {
                widths[i] = Math.max(widths[i], row[i].codePointCount(0, row[i].length()));
            }
        }
        StringBuilder text = new StringBuilder();
        for (String[] row : rows) {
            for (int i = 0; i < row.length; i++) {
                text.append(row[i]);
                if (i < row.length - 1) {
                    text.append(" ".repeat(widths[i] - row[i].codePointCount(0, row[i].length()) + 2));
                }
            }
            text.append(System.lineSeparator());
        }
        out.print(text);
        out.flush();
    }

    /** " (billing@host-17:4242 worker-3)": the process and thread behind a holder, short; "" when not known. */
    static String who(HolderIdentity named) {
        if (named.client().isEmpty()) {
            return "";
        }
        ClientIdentity client = named.client().get();
        return " (" + (client.application().isEmpty() ? "" : client.application() + "@") + client.host() + ":"
                + client.pid() + (named.thread().isEmpty() ? "" : " " + named.thread()) + ")";
    }

    void details(LockInfo lock) {
        StringBuilder text = new StringBuilder();
        line(text, "name", lock.name());
        line(text, "kind", lock.kind().label());
        if (lock.kind() == LockKind.SEMAPHORE) {
            line(text, "permits", lock.permits() < 0 ? "not set" : Integer.toString(lock.permits()));
        }
        line(text, "state", lock.isHeld() ? "held" : "not held");
        if (lock.isHeld()) {
            for (Map.Entry<String, Integer> holder : sorted(lock.holders()).entrySet()) {
                HolderIdentity named = lock.identities().get(holder.getKey());
                line(text, "holder", holder.getKey() + " (" + holder.getValue()
                        + (holder.getValue() == 1 ? " hold)" : " holds)")
                        + (named == null ? "" : ": " + named.describe()));
            }
            line(text, "lease left", Durations.isForever(lock.remainingLease())
                    ? "no expiry (the key has no TTL; relock always sets one)"
                    : Durations.format(lock.remainingLease()) + " (" + lock.remainingLease().toMillis() + " ms)");
            line(text, "fencing token", Long.toString(lock.fencingToken()));
        }
        line(text, "waiters", Integer.toString(lock.waiters()));
        out.print(text);
        out.flush();
    }

    /** One "key: value" line for people; the other reports ({@link LatchReport}, {@link ConditionReport}) use it too. */
    static void line(StringBuilder text, String key, String value) {
        text.append(key).append(": ").append(value).append(System.lineSeparator());
    }

    // ---- for scripts ------------------------------------------------------------------------

    /** The fields of one JSON object, written into an open object. */
    interface JsonFields {
        void write(JsonGenerator json) throws IOException;
    }

    /** Writes one JSON object on one line of {@code out}, its fields by {@code fields}. */
    static void jsonObject(PrintStream out, JsonFields fields) {
        try (JsonGenerator json = jsonTo(out)) {
            json.writeStartObject();
            fields.write(json);
            json.writeEndObject();
            json.writeRaw('\n');
        } catch (IOException e) {
            throw new UncheckedIOException("writing JSON to stdout failed", e);
        }
        out.flush();
    }

    /** A JSON generator on {@code out} (UTF-8) that leaves it open when closed. */
    private static JsonGenerator jsonTo(PrintStream out) throws IOException {
        return new JsonFactory()
                .disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET)
                .createGenerator((OutputStream) out, JsonEncoding.UTF8);
    }

    void jsonLines(List<LockInfo> locks, boolean withHeld) {
        try (JsonGenerator json = jsonTo(out)) {
            json.setRootValueSeparator(null);
            for (LockInfo lock : locks) {
                json.writeStartObject();
                json.writeStringField("name", lock.name());
                json.writeStringField("kind", lock.kind().label());
                if (withHeld) {
                    json.writeBooleanField("held", lock.isHeld());
                }
                json.writeArrayFieldStart("holders");
                for (Map.Entry<String, Integer> holder : sorted(lock.holders()).entrySet()) {
                    json.writeStartObject();
                    json.writeStringField("owner", holder.getKey());
                    json.writeNumberField("holds", holder.getValue());
                    HolderIdentity named = lock.identities().get(holder.getKey());
                    if (named != null && named.client().isPresent()) {
                        ClientIdentity client = named.client().get();
                        json.writeStringField("application", client.application());
                        json.writeStringField("host", client.host());
                        json.writeNumberField("pid", client.pid());
                        json.writeStringField("label", client.label());
                        json.writeStringField("thread", named.thread());
                    }
                    json.writeEndObject();
                }
                json.writeEndArray();
                json.writeNumberField("leaseMillis", Durations.millis(lock.remainingLease()));
                json.writeNumberField("fencingToken", lock.fencingToken());
                json.writeNumberField("waiters", lock.waiters());
                if (lock.kind() == LockKind.SEMAPHORE) {
                    json.writeNumberField("permits", lock.permits());
                }
                json.writeEndObject();
                json.writeRaw('\n');
            }
        } catch (IOException e) {
            throw new UncheckedIOException("writing JSON to stdout failed", e);
        }
        out.flush();
    }

    private static Map<String, Integer> sorted(Map<String, Integer> holders) {
        return new TreeMap<>(holders);
    }

    /** The charset System.out encodes with: the terminal's or the locale's. */
    private static Charset outputCharset() {
        for (String property : new String[] {"stdout.encoding", "sun.stdout.encoding", "native.encoding"}) {
            String name = System.getProperty(property);
            if (name != null) {
                try {
                    return Charset.forName(name);
                } catch (IllegalArgumentException e) {
                    // unknown here: try the next
                }
            }
        }
        return Charset.defaultCharset();
    }
}
