package dev.relock;

import dev.relock.internal.script.SingleServerScripts;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.sync.RedisCommands;
import java.util.List;

/**
 * relock's single-server lock scripts, run directly on a test's admin connection for a scripted owner, with the
 * arguments a client would send (the default key prefix, a grace of {@value #GRACE} ms, plain pub/sub wake-ups, a lease
 * of 30 s). A scripted owner of a client id nobody subscribes to ({@link #NOBODY}) hears no wake-up and takes no grant:
 * the state of a waiter that gave up while its grant was on the way. The scripts' headers say what each argument means.
 */
final class LockScripts {

    /** A client id no client has: its messages go unheard. */
    static final String NOBODY = "feedface";
    static final String GRACE = "1000";
    private static final String CHANNEL_PREFIX = "relock:wake:";
    private static final String LEASE = "30000";

    private final RedisCommands<String, String> redis;

    LockScripts(RedisCommands<String, String> redis) {
        this.redis = redis;
    }

    /** acquire.lua: a fresh writer that waits {@code waitMillis}, with attempt id {@code attemptId} ('' for none). */
    List<Long> acquire(String name, String owner, String waitMillis, String attemptId) {
        return redis.eval(SingleServerScripts.ACQUIRE.body(), ScriptOutputType.MULTI, keys(name),
                owner, LEASE, "0", waitMillis, GRACE, CHANNEL_PREFIX, attemptId);
    }

    /** acquire-read.lua: a fresh reader that waits {@code waitMillis}, with attempt id {@code attemptId} ('' for none). */
    List<Long> acquireRead(String name, String owner, String waitMillis, String attemptId) {
        return redis.eval(SingleServerScripts.ACQUIRE_READ.body(), ScriptOutputType.MULTI, keys(name),
                owner, LEASE, "0", waitMillis, GRACE, CHANNEL_PREFIX, attemptId);
    }

    /**
     * withdraw.lua for a writer ({@code kind} "w") or reader ("r"), sent when {@code lastAttempt} was the highest attempt
     * id handed out; {@code undoFreshHold}: also undo a fresh hold (after a lost reply).
     */
    long withdraw(String name, String owner, String kind, boolean undoFreshHold, long lastAttempt) {
        return redis.eval(SingleServerScripts.WITHDRAW.body(), ScriptOutputType.INTEGER, keys(name),
                owner, kind, undoFreshHold ? "1" : "0", GRACE, CHANNEL_PREFIX, Long.toString(lastAttempt));
    }

    /** release.lua of every write hold of {@code owner}, the one with fencing token {@code token}. */
    long release(String name, String owner, long token) {
        return redis.eval(SingleServerScripts.RELEASE.body(), ScriptOutputType.INTEGER, keys(name),
                owner, "all", GRACE, CHANNEL_PREFIX, Long.toString(token));
    }

    /** release-read.lua of every read hold of {@code owner}, the one with fencing token {@code token}. */
    long releaseRead(String name, String owner, long token) {
        return redis.eval(SingleServerScripts.RELEASE_READ.body(), ScriptOutputType.INTEGER, keys(name),
                owner, "all", GRACE, CHANNEL_PREFIX, Long.toString(token));
    }

    /** release-after.lua of {@code owner}'s last hold of {@code kind} ("w" or "r"), the one with fencing token {@code token}. */
    long releaseAfter(String name, String owner, String kind, long delayMillis, long token) {
        return redis.eval(SingleServerScripts.RELEASE_AFTER.body(), ScriptOutputType.INTEGER, keys(name),
                owner, kind, Long.toString(delayMillis), CHANNEL_PREFIX, Long.toString(token));
    }

    /**
     * renew.lua for one hold of {@code owner}, of {@code kind} ("w" or "r"), to {@code leaseMillis}: as the lease keeper's
     * renewal or an extension sends it, whenever the test lets it reach Redis.
     */
    List<Long> renew(String name, String owner, String kind, long leaseMillis) {
        String[] all = keys(name);
        String[] keys = "w".equals(kind) ? new String[] {all[0]} : new String[] {all[0], all[4]};
        return redis.eval(SingleServerScripts.RENEW.body(), ScriptOutputType.MULTI, keys, owner,
                Long.toString(leaseMillis), kind);
    }

    /** The five keys of lock {@code name}, in the order the scripts take them. */
    static String[] keys(String name) {
        String base = "relock:{" + name + "}";
        return new String[] {base, base + ":fence", base + ":queue", base + ":expiry", base + ":readers"};
    }
}
