package dev.relock.internal.engine;

/**
 * The Redis keys of one lock. All of them carry the hash tag {@code {<escaped name>}}, so they
 * live in one Cluster slot and one script may touch them all.
 *
 * <p>Escaping keeps the tag intact whatever the name: '%', '{' and '}' become %25, %7B and %7D, so
 * the first '}' after the prefix's ':{' always closes the tag, and {@link #nameOf} can undo it.
 *
 * <p>What each key holds, the same on both engines, is described in the scripts' lib/common.lua
 * (what only one engine adds: lib/queue.lua, redlock/acquire.lua). A semaphore named N has
 * the same set of keys under {@code <prefix>:{N}:sem}, so a lock and a semaphore may share a name.
 * Two LockKeys are equal when they name the same keys.
 *
 * <p>Public because both engines, each in a package of its own, use it.
 */
public final class LockKeys {

    /*
     * Footprint: a lock view and every hold of it keep this object, so it keeps only the prefix
     * (one string per client) and the name (the caller's string); the five key strings are made
     * when asked for. all() serves the locks used most recently from RECENT, so a lock taken and
     * given back over and over makes its keys once, while a held lock keeps none of them alive.
     */
    private static final int RECENT_SLOTS = 64; // a power of two; at most ~30 KB of strings
    private static final Derived[] RECENT = new Derived[RECENT_SLOTS];

    /** The key strings of one lock; immutable, so a racy read of a RECENT slot sees it whole or not at all. */
    private record Derived(LockKeys keys, String[] all) {}

    private final String prefix;
    private final String name;
    private final boolean semaphore;

    private LockKeys(String prefix, String name, boolean semaphore) {
        this.prefix = prefix;
        this.name = name;
        this.semaphore = semaphore;
    }

    public static LockKeys of(String prefix, String name) {
        return new LockKeys(prefix, name, false);
    }

    public static LockKeys ofSemaphore(String prefix, String name) {
        return new LockKeys(prefix, name, true);
    }

    /** Hash of the holders (writer, readers, tokens; or a semaphore's permits); a lock's TTL is its longest lease. */
    public String lock() {
        Derived recent = recent();
        return recent != null ? recent.all[0] : key("");
    }

    /**
     * The lock's own wake-up channel for sharded pub/sub on a Cluster: it carries the lock's hash tag, so
     * it is in the lock's slot, the only shard channel a script on the lock's keys may {@code SPUBLISH} to.
     */
    public String wakeChannel() {
        return lock() + ":wake";
    }

    /** String: the last fencing token handed out. */
    public String fence() {
        return key(":fence");
    }

    /** Zset of waiters, by when their wait began. */
    public String queue() {
        return key(":queue");
    }

    /** Hash waiter -> until when it counts as waiting; '~g|' fields hand the lock over to a waiter. */
    public String expiry() {
        return key(":expiry");
    }

    /** Zset holder -> end of its own lease: the readers of a lock, the permit holders of a semaphore. */
    public String leases() {
        Derived recent = recent();
        return recent != null ? recent.all[4] : key(leasesSuffix());
    }

    /**
     * The five keys in the order every script over one lock takes them, in both engines' families: lock, fence,
     * queue, expiry, leases (see {@code LuaScript}). The array may be shared with other callers: never write to it.
     */
    public String[] all() {
        Derived recent = recent();
        if (recent != null) {
            return recent.all;
        }
        String base = key("");
        String[] all = {base, base + ":fence", base + ":queue", base + ":expiry", base + leasesSuffix()};
        RECENT[slot()] = new Derived(this, all);
        return all;
    }

    private Derived recent() {
        Derived recent = RECENT[slot()];
        return recent != null && recent.keys.equals(this) ? recent : null;
    }

    private int slot() {
        int h = hashCode();
        return (h ^ (h >>> 16)) & (RECENT_SLOTS - 1);
    }

    // every key carries the hash tag; a semaphore's keys sit under <tag>:sem. One string made.
    private String key(String suffix) {
        return prefix + ":{" + escape(name) + (semaphore ? "}:sem" : "}") + suffix;
    }

    private String leasesSuffix() {
        return semaphore ? ":leases" : ":readers";
    }

    @Override
    public boolean equals(Object other) {
        return other == this || other instanceof LockKeys keys && keys.semaphore == semaphore
                && keys.name.equals(name) && keys.prefix.equals(prefix);
    }

    @Override
    public int hashCode() {
        return (31 * prefix.hashCode() + name.hashCode()) * 2 + (semaphore ? 1 : 0);
    }

    @Override
    public String toString() {
        return key("");
    }

    /**
     * The hash of the count-down latch named {@code name} (see latch.lua), in the name's slot; its shard channel for
     * wake-ups is this key + {@code ":wake"}.
     */
    public static String latchKey(String prefix, String name) {
        return prefix + ":{" + escape(name) + "}:latch";
    }

    /** The lock name in a lock key made by {@link #of}, or null if the key is not one. */
    public static String nameOf(String prefix, String lockKey) {
        String start = prefix + ":{";
        if (!lockKey.startsWith(start) || !lockKey.endsWith("}")) {
            return null;
        }
        String escaped = lockKey.substring(start.length(), lockKey.length() - 1);
        return escaped.indexOf('}') >= 0 ? null : unescape(escaped);
    }

    /**
     * A {@code SCAN MATCH} pattern for the lock keys made by {@link #of} under {@code prefix} whose names match
     * {@code nameGlob}: the prefix matches only itself, and the glob is escaped like a name, so its {@code *},
     * {@code ?} and {@code []} stay globs.
     */
    public static String lockKeyPattern(String prefix, String nameGlob) {
        StringBuilder out = new StringBuilder(prefix.length() + nameGlob.length() + 4);
        for (int i = 0; i < prefix.length(); i++) {
            char c = prefix.charAt(i);
            if ("*?[]\\".indexOf(c) >= 0) {
                out.append('\\');
            }
            out.append(c);
        }
        return out.append(":{").append(escape(nameGlob)).append('}').toString();
    }

    static String escape(String name) {
        // a newline is escaped too: wake-up messages are lines (queue.lua), and a key never spans two
        if (name.indexOf('%') < 0 && name.indexOf('{') < 0 && name.indexOf('}') < 0 && name.indexOf('\n') < 0) {
            return name;
        }
        StringBuilder out = new StringBuilder(name.length() + 8);
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            switch (c) {
                case '%' -> out.append("%25");
                case '{' -> out.append("%7B");
                case '}' -> out.append("%7D");
                case '\n' -> out.append("%0A");
                default -> out.append(c);
            }
        }
        return out.toString();
    }

    static String unescape(String escaped) {
        StringBuilder out = new StringBuilder(escaped.length());
        for (int i = 0; i < escaped.length(); i++) {
            char c = escaped.charAt(i);
            if (c == '%' && i + 2 < escaped.length()) {
                String code = escaped.substring(i + 1, i + 3);
                switch (code) {
                    case "25" -> { out.append('%'); i += 2; continue; }
                    case "7B" -> { out.append('{'); i += 2; continue; }
                    case "7D" -> { out.append('}'); i += 2; continue; }
                    case "0A" -> { out.append('\n'); i += 2; continue; }
                    default -> { }
                }
            }
            out.append(c);
        }
        return out.toString();
    }
}
