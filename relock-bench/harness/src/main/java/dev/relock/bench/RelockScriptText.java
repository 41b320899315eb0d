package dev.relock.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * relock's single-server acquire and release scripts as relock sends them, and the keys of one lock, for the
 * diagnostics that run relock's scripts from a bare Lettuce connection. Read from relock-core's jar by the
 * bench itself (a file's {@code -- uses <file>.lua} lines put those files before it, once, as the scripts'
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
        Set<String> files = new LinkedHashSet<>();
        addWithPreludes(file, files);
        StringBuilder body = new StringBuilder();
        files.forEach(each -> body.append(read(each)));
        return body.toString();
    }

    /** Adds the files {@code file} uses, each after those it uses itself, then {@code file}. */
    private static void addWithPreludes(String file, Set<String> files) {
        Matcher uses = USES.matcher(read(file));
        while (uses.find()) {
            if (!files.contains(uses.group(1))) {
                addWithPreludes(uses.group(1), files);
            }
        }
        files.add(file);
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
