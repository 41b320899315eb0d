package dev.relock.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * relock's single-server acquire and release scripts as relock sends them, and the keys of one lock, for the
 * diagnostics that run relock's scripts from a bare Lettuce connection. Read from relock-core's jar by the
 * bench itself (a file's {@code -- uses <file>.lua} line puts that file where it stands, once, as the scripts'
 * headers say), so the bench needs none of relock's internal classes. Names given to {@link #keysOf} must not
 * contain '{', '}' or '%', which relock escapes.
 */
final class RelockScriptText {

    private static final String DIRECTORY = "dev/relock/internal/script/";
    private static final Pattern USES = Pattern.compile("(?m)^-- uses ([a-z-]+\\.lua)");

    static final String ACQUIRE = withPreludes("acquire.lua");
    static final String RELEASE = withPreludes("release.lua");

    private RelockScriptText() {
    }

    /** The keys every single-server lock script takes, in their order: lock, fence, queue, expiry, leases. */
    static String[] keysOf(String prefix, String name) {
        if (name.matches(".*[{}%].*")) {
            throw new IllegalArgumentException("a bench lock name without '{', '}' or '%': " + name);
        }
        String lock = prefix + ":{" + name + "}";
        return new String[] {lock, lock + ":fence", lock + ":queue", lock + ":expiry", lock + ":readers"};
    }

    private static String withPreludes(String file) {
        return withPreludes(read(file), new HashSet<>());
    }

    /** {@code script} with the file each {@code -- uses} line names put right after that line, once (as LuaScript). */
    private static String withPreludes(String script, Set<String> included) {
        Matcher uses = USES.matcher(script);
        StringBuilder body = new StringBuilder(script.length());
        int from = 0;
        while (uses.find()) {
            int lineEnd = script.indexOf('\n', uses.end());
            lineEnd = lineEnd < 0 ? script.length() : lineEnd + 1;
            body.append(script, from, lineEnd);
            from = lineEnd;
            if (included.add(uses.group(1))) {
                body.append(withPreludes(read(uses.group(1)), included)).append('\n');
            }
        }
        return body.append(script, from, script.length()).toString();
    }

    private static String read(String file) {
        try (InputStream in = RelockScriptText.class.getClassLoader().getResourceAsStream(DIRECTORY + file)) {
            if (in == null) {
                throw new IllegalStateException("relock-core has no script " + DIRECTORY + file);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
