package dev.relock.internal.single;

import dev.relock.internal.engine.LockMode;
import dev.relock.internal.script.LuaScript;

/**
 * The single-server scripts of each {@link LockMode}, and the arguments each takes (the scripts' headers say what
 * they mean). All of them take the keys of {@code LockKeys.all()}. The two lock modes count holds in Redis and share
 * withdraw.lua, which tells them apart by their kind letter; a semaphore's permits are never re-entered, go back
 * together and are of one kind, so their scripts take no hold count and no letter. The Redlock engine has scripts
 * of its own.
 */
enum ModeScripts {
    WRITE(LuaScript.ACQUIRE, LuaScript.RELEASE, LuaScript.WITHDRAW, "w"),
    READ(LuaScript.ACQUIRE_READ, LuaScript.RELEASE_READ, LuaScript.WITHDRAW, "r"),
    PERMITS(LuaScript.PERMITS_ACQUIRE, LuaScript.PERMITS_RELEASE, LuaScript.PERMITS_WITHDRAW, "s");

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
     * fresh acquisition), permits are never re-entered. {@code more} follows the wake-up route: a semaphore's number
     * of permits, or the id of a writer's or reader's attempt that takes a grant on release.
     */
    String[] acquireArgs(String owner, long leaseMillis, int holds, long waitMillis, String grace, String route,
            String... more) {
        String lease = Long.toString(leaseMillis);
        // "0": a fresh acquisition's holds, and a first attempt's wait
        String wait = waitMillis == 0 ? "0" : Long.toString(waitMillis);
        String[] leading = this == PERMITS
                ? new String[] {owner, lease, wait, grace, route}
                : new String[] {owner, lease, holds == 0 ? "0" : Integer.toString(holds), wait, grace, route};
        if (more.length == 0) {
            return leading;
        }
        String[] args = new String[leading.length + more.length];
        System.arraycopy(leading, 0, args, 0, leading.length);
        System.arraycopy(more, 0, args, leading.length, more.length);
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
