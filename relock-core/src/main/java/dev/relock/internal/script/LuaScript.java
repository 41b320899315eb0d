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
 * One Lua script of relock, read once from the resources below this class's package, and the one loader of them.
 * The resources are laid out by family, named for the topology its scripts run on:
 * <ul>
 *   <li>{@code single/}: what a single-server client runs, on one Redis (standalone, Sentinel's master, a Cluster
 *       node): {@link SingleServerScripts};
 *   <li>{@code redlock/}: what a Redlock client runs on each of its independent nodes: {@link RedlockScripts};
 *   <li>{@code shared/}: what both engines run, on the one server or on each node: {@link SharedScripts};
 *   <li>{@code fencing/}: what {@code RedisFence} runs on the user's own connection: {@link FencingScripts};
 *   <li>{@code lib/}: functions the scripts share, never run on their own: {@code token.lua} (the server's clock and
 *       fencing tokens), {@code common.lua} (what both engines' locks keep: what each key holds, readers' leases; it
 *       uses token.lua) and {@code queue.lua} (the single-server lock's layout, queue and wake-ups; it uses
 *       common.lua).
 * </ul>
 * Only the family classes load scripts, each its own directory's; every script is a constant of one of them, and
 * its header's first line names it as {@link #name()} does ({@code single/acquire.lua}).
 *
 * <p>A line {@code -- uses <file>.lua} in a script puts that file of {@code lib/} where the line stands, with the
 * files it uses before it; each file goes in once, where it is first named. Most scripts name them in their header;
 * a script with a fast path names only token.lua there and the rest after the fast path, which then does not pay
 * for defining the helpers it does not call.
 *
 * <p>The keys a script takes, in every family: a script over one lock or semaphore takes the five keys of
 * {@code LockKeys.all()}, in this order whether it reads them all or not: {@code KEYS[1]} lock (a semaphore's hash),
 * {@code KEYS[2]} fence, {@code KEYS[3]} queue, {@code KEYS[4]} expiry, {@code KEYS[5]} readers (a semaphore's
 * leases); keys of its own come after them ({@code single/condition.lua}'s wait set). They share the lock's hash
 * tag, so the five cost one Cluster slot. A script over many locks takes a group of keys per lock, with the roles in
 * the same order: {@code single/multi-acquire.lua} all five of each lock; the two {@code renew.lua} only the keys a
 * live hold has (its lock, then its readers), because a Cluster node migrating a slot runs a script only if it has
 * every key the script declares. A script over some other key takes that key ({@code single/latch.lua}, the
 * identity record's {@code shared/} scripts, {@code fencing/fenced-set.lua}).
 *
 * <p>Immutable; the SHA-1 is the one Redis computes for {@code EVALSHA}.
 *
 * <p>Public because both engines, each in a package of its own, and {@code RedisFence} run scripts.
 */
public final class LuaScript {

    private static final Pattern USES = Pattern.compile("(?m)^-- uses ([a-z-]+\\.lua)");
    private static final String LIBRARY = "lib/";

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

    /** The resource's path below this package, its family's directory first ({@code redlock/acquire.lua}). */
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

    /**
     * The script at {@code path} below this package's resources ({@code single/acquire.lua}), with the files of
     * {@code lib/} it uses.
     *
     * @throws IllegalStateException if the resource, or a file it uses, is missing
     */
    static LuaScript load(String path) {
        return new LuaScript(path, asSent(withPreludes(read(path), new HashSet<>())));
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
     * files it uses, unless {@code included} has it already; adds what it puts in to {@code included}. The files are
     * {@code lib/}'s.
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
                body.append(withPreludes(read(LIBRARY + uses.group(1)), included)).append('\n');
            }
        }
        return body.append(script, from, script.length()).toString();
    }

    private static String read(String file) {
        try (InputStream in = LuaScript.class.getResourceAsStream(file)) {
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
