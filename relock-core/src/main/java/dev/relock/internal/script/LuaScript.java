package dev.relock.internal.script;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One Lua script of relock, read once from the resources beside its class. A line
 * {@code -- uses <file>.lua} in a script prepends that file's functions, from the resources beside
 * this class, for scripts of every package: {@code common.lua} (what both engines' scripts share: what
 * each key holds, the server's clock, fencing tokens, readers' leases) and {@code queue.lua} (the
 * single-server lock's layout, queue and wake-ups, which itself uses common.lua).
 * Each file is prepended once, before the files that use it. Immutable; the SHA-1 is the one Redis
 * computes for {@code EVALSHA}.
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


    private final String name;
    private final String body;
    private final String sha;

    private LuaScript(String name, String body) {
        this.name = name;
        this.body = body;
        this.sha = sha1(body);
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

    private static LuaScript load(String file) {
        return load(LuaScript.class, file);
    }

    /**
     * A script kept as a resource beside {@code anchor}'s class file, with the preludes it uses.
     *
     * @throws IllegalStateException if the resource, or a prelude it uses, is missing
     */
    public static LuaScript load(Class<?> anchor, String file) {
        String script = read(anchor, file);
        Set<String> preludes = new LinkedHashSet<>();
        addPreludesOf(script, preludes);
        StringBuilder body = new StringBuilder();
        for (String prelude : preludes) {
            body.append(read(LuaScript.class, prelude));
        }
        return new LuaScript(file, body.append(script).toString());
    }

    /** Adds the preludes {@code script} uses, each after those it uses itself. */
    private static void addPreludesOf(String script, Set<String> preludes) {
        Matcher uses = USES.matcher(script);
        while (uses.find()) {
            String prelude = uses.group(1);
            if (!preludes.contains(prelude)) {
                addPreludesOf(read(LuaScript.class, prelude), preludes);
                preludes.add(prelude);
            }
        }
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
