package dev.relock.internal;

/**
 * The Redis keys of one lock. All of them carry the hash tag {@code {<escaped name>}}, so they
 * live in one Cluster slot and one script may touch them all.
 *
 * <p>Escaping keeps the tag intact whatever the name: '%', '{' and '}' become %25, %7B and %7D, so
 * the first '}' after the prefix's ':{' always closes the tag, and {@link #nameOf} can undo it.
 *
 * <p>What each key holds is described in queue.lua, beside the scripts. A semaphore named N has
 * the same set of keys under {@code <prefix>:{N}:sem}, so a lock and a semaphore may share a name.
 *
 * @param lock hash of the holders (writer, readers, tokens; or a semaphore's permits); a lock's TTL
 *     is its longest lease
 * @param fence string: the last fencing token handed out
 * @param queue zset of waiters in arrival order
 * @param expiry hash waiter -> deadline of its queue entry
 * @param leases zset holder -> end of its own lease: the readers of a lock, the permit holders of
 *     a semaphore
 */
public record LockKeys(String lock, String fence, String queue, String expiry, String leases) {

    public static LockKeys of(String prefix, String name) {
        return under(prefix + ":{" + escape(name) + "}", ":readers");
    }

    public static LockKeys ofSemaphore(String prefix, String name) {
        return under(prefix + ":{" + escape(name) + "}:sem", ":leases");
    }

    private static LockKeys under(String base, String leasesSuffix) {
        return new LockKeys(base, base + ":fence", base + ":queue", base + ":expiry", base + leasesSuffix);
    }

    /** The keys in the order every lock script takes them (see queue.lua). */
    String[] all() {
        return new String[] {lock, fence, queue, expiry, leases};
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

    static String escape(String name) {
        StringBuilder out = new StringBuilder(name.length() + 8);
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            switch (c) {
                case '%' -> out.append("%25");
                case '{' -> out.append("%7B");
                case '}' -> out.append("%7D");
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
                    default -> { }
                }
            }
            out.append(c);
        }
        return out.toString();
    }
}
