package dev.relock.internal.script;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One Lua script of relock, read once from the resources beside its class. A line
 * {@code -- uses <file>.lua} in a script puts that file's functions, from the resources beside this
 * class, where the line stands, for scripts of every package: {@code token.lua} (the server's clock and
 * fencing tokens), {@code common.lua} (what both engines' scripts share: what each key holds, readers'
 * leases; it uses token.lua) and {@code queue.lua} (the single-server lock's layout, queue and wake-ups;
 * it uses common.lua). Each file goes in once, where it is first named, after the files it uses. Most
 * scripts name them in their header; a script with a fast path names only token.lua there and the rest
 * after the fast path, which then does not pay for defining the helpers it does not call. Immutable; the
 * SHA-1 is the one Redis computes for {@code EVALSHA}.
 *
 * <p>Public because both engines, each in a package of its own, run scripts; tests load them too.
 */
public final class LuaScript {

    // before the scripts below, which it loads: static fields are set in the order they are written
    private static final Pattern USES = Pattern.compile("(?m)^-- uses ([a-z-]+\\.lua)");

    public static final LuaScript ACQUIRE = load("acquire.lua");
    public static final LuaScript RELEASE = load("release.lua");
    public static final LuaScript ACQUIRE_READ = load("acquire-read.lua");
    public static final LuaScript RELEASE_READ = load("release-read.lua");
    public static final LuaScript WITHDRAW = load("withdraw.lua");
    public static final LuaScript RELEASE_AFTER = load("release-after.lua");
    public static final LuaScript FORCE_UNLOCK = load("force-unlock.lua");
    public static final LuaScript RENEW = load("renew.lua");
    public static final LuaScript INSPECT = load("inspect.lua");
    public static final LuaScript MULTI_ACQUIRE = load("multi-acquire.lua");
    public static final LuaScript PERMITS_ACQUIRE = load("permits-acquire.lua");
    public static final LuaScript PERMITS_RELEASE = load("permits-release.lua");
    public static final LuaScript PERMITS_WITHDRAW = load("permits-withdraw.lua");
    public static final LuaScript PERMITS_ADMIN = load("permits-admin.lua");
    public static final LuaScript PERMITS_INSPECT = load("permits-inspect.lua");
    public static final LuaScript REGISTER = load("register.lua");
    public static final LuaScript NAME_HOLDERS = load("name-holders.lua");
    public static final LuaScript LATCH = load("latch.lua");
    public static final LuaScript CONDITION = load("condition.lua");


    private final String name;
    private final String body;
    private final String sha;
    // sha in ASCII, encoded once: shared with every EVALSHA, which only copies it, never changes it
    private final byte[] shaBytes;

    private LuaScript(String name, String body) {
        this.name = name;
        this.body = body;
        this.sha = sha1(body);
        this.shaBytes = sha.getBytes(StandardCharsets.US_ASCII);
    }

    /** The resource's file name, for messages. */
    public String name() {
        return name;
    }

    /** The full text sent by {@code EVAL}. */
    public String body() {
        return body;
    }

    /** The SHA-1 of {@link #body()} in lower-case hex, as {@code EVALSHA} wants it. */
    public String sha() {
        return sha;
    }

    /** {@link #sha()} as the bytes {@code EVALSHA} sends; shared, so never to be changed. */
    public byte[] shaBytes() {
        return shaBytes;
    }

    private static LuaScript load(String file) {
        return load(LuaScript.class, file);
    }

    /**
     * A script kept as a resource beside {@code anchor}'s class file, with the preludes it uses.
     *
     * @throws IllegalStateException if the resource, or a prelude it uses, is missing
     */
    public static LuaScript load(Class<?> anchor, String file) {
        return new LuaScript(file, asSent(withPreludes(read(anchor, file), new HashSet<>())));
    }

    /**
     * {@code script} without what Redis never runs: each line's indentation, and each comment line's text (its line
     * stays, empty, so that the line numbers in Redis's error messages are the loaded script's). A script goes by
     * {@code EVAL}, in full, wherever the order of commands matters (every Redlock acquire and release, on each node):
     * a third of the bytes to send, and for Redis to hash on every call. Safe for relock's scripts, which have no
     * long strings or long comments ({@code [[ ]]}), where a line starting with {@code --} would not be a comment.
     */
    static String asSent(String script) {
        StringBuilder sent = new StringBuilder(script.length());
        for (String line : script.split("\n", -1)) {
            String code = line.strip();
            if (!code.startsWith("--")) {
                sent.append(code);
            }
            sent.append('\n');
        }
        sent.setLength(sent.length() - 1);
        return sent.toString();
    }

    /**
     * {@code script} with the file each {@code -- uses} line names put right after that line, itself with the
     * files it uses, unless {@code included} has it already; adds what it puts in to {@code included}.
     */
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
                body.append(withPreludes(read(LuaScript.class, uses.group(1)), included)).append('\n');
            }
        }
        return body.append(script, from, script.length()).toString();
    }

    private static String read(Class<?> anchor, String file) {
        try (InputStream in = anchor.getResourceAsStream(file)) {
            if (in == null) {
                throw new IllegalStateException("relock script resource missing: " + file);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read relock script " + file, e);
        }
    }

    private static String sha1(String text) {
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-1");
            return HexFormat.of().formatHex(digest.digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 is required of every JVM", e);
        }
    }

    @Override
    public String toString() {
        return name;
    }
}
