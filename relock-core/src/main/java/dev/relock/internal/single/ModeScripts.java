package dev.relock.internal.single;

import dev.relock.internal.engine.LockMode;
import dev.relock.internal.script.LuaScript;
import dev.relock.internal.script.SingleServerScripts;
import java.util.concurrent.TimeUnit;

/**
 * The single-server scripts of each {@link LockMode}, and the arguments each takes (the scripts' headers say what
 * they mean). All of them take the keys of {@code LockKeys.all()}. The two lock modes count holds in Redis and share
 * withdraw.lua, which tells them apart by their kind letter; a semaphore's permits are never re-entered, go back
 * together and are of one kind, so their scripts take no hold count and no letter. The Redlock engine has scripts
 * of its own.
 */
enum ModeScripts {
    WRITE(SingleServerScripts.ACQUIRE, SingleServerScripts.RELEASE, SingleServerScripts.WITHDRAW, "w"),
    READ(SingleServerScripts.ACQUIRE_READ, SingleServerScripts.RELEASE_READ, SingleServerScripts.WITHDRAW, "r"),
    PERMITS(SingleServerScripts.PERMITS_ACQUIRE, SingleServerScripts.PERMITS_RELEASE,
            SingleServerScripts.PERMITS_WITHDRAW, "s");

    /**
     * What a waiter without a deadline tells the acquire script it will wait: its queue entry then lives as long as
     * the retry hint, which it refreshes.
     */
    static final long WAIT_FOREVER_MILLIS = TimeUnit.DAYS.toMillis(1);
    private static final String WAIT_FOREVER = Long.toString(WAIT_FOREVER_MILLIS);

    final LuaScript acquire;
    final LuaScript release;
    final LuaScript withdraw;
    // the mode's letter in the arguments of withdraw.lua, release-after.lua and renew.lua
    final String kind;

    ModeScripts(LuaScript acquire, LuaScript release, LuaScript withdraw, String kind) {
        this.acquire = acquire;
        this.release = release;
        this.withdraw = withdraw;
        this.kind = kind;
    }

    static ModeScripts of(LockMode mode) {
        return switch (mode) {
            case WRITE -> WRITE;
            case READ -> READ;
            case PERMITS -> PERMITS;
        };
    }

    /**
     * The arguments of the acquire script: a lock's also takes the holds the owner has now ({@code holds}; 0 for a
     * fresh acquisition), permits are never re-entered; {@code lease} in ms. {@code more} follows the wake-up route:
     * a semaphore's number of permits, or the id of a writer's or reader's attempt that takes a grant on release.
     */
    String[] acquireArgs(String owner, String lease, int holds, long waitMillis, String grace, String route,
            String... more) {
        int leading = this == PERMITS ? 5 : 6;
        String[] args = acquireArgs(leading + more.length, owner, lease, holds, waitMillis, grace, route);
        System.arraycopy(more, 0, args, leading, more.length);
        return args;
    }

    /** As {@link #acquireArgs(String, String, int, long, String, String, String...)} with one more argument. */
    String[] acquireArgs(String owner, String lease, int holds, long waitMillis, String grace, String route,
            String more) {
        String[] args = acquireArgs((this == PERMITS ? 5 : 6) + 1, owner, lease, holds, waitMillis, grace, route);
        args[args.length - 1] = more;
        return args;
    }

    /** An array of {@code length} with the leading arguments in place. */
    private String[] acquireArgs(int length, String owner, String lease, int holds, long waitMillis, String grace,
            String route) {
        // "0": a fresh acquisition's holds, and a first attempt's wait
        String wait = waitMillis == 0 ? "0"
                : waitMillis == WAIT_FOREVER_MILLIS ? WAIT_FOREVER : Long.toString(waitMillis);
        int leading = this == PERMITS ? 5 : 6;
        String[] args = new String[length];
        args[0] = owner;
        args[1] = lease;
        if (this != PERMITS) {
            args[2] = holds == 0 ? "0" : Integer.toString(holds);
        }
        args[leading - 3] = wait;
        args[leading - 2] = grace;
        args[leading - 1] = route;
        return args;
    }

    /**
     * The arguments of the release script: a lock's also takes the holds the owner keeps ({@code keeps}, or "all"),
     * and the hold's fencing token {@code token}, so that the release, sent again after a reconnect, never frees a
     * later hold of the same owner.
     */
    String[] releaseArgs(String owner, String keeps, String grace, String route, long token) {
        return this == PERMITS
                ? new String[] {owner, grace, route}
                : new String[] {owner, keeps, grace, route, Long.toString(token)};
    }

    /**
     * The arguments of the withdraw script; {@code undoFreshHold}: also undo a hold taken once (see withdraw.lua);
     * {@code lastAttempt}: the highest attempt id handed out before it, so that the withdraw, sent again after a
     * reconnect, never undoes a grant on release to a later attempt.
     */
    String[] withdrawArgs(String owner, boolean undoFreshHold, String grace, String route, long lastAttempt) {
        String undo = undoFreshHold ? "1" : "0";
        return this == PERMITS
                ? new String[] {owner, undo, grace, route}
                : new String[] {owner, kind, undo, grace, route, Long.toString(lastAttempt)};
    }
}
