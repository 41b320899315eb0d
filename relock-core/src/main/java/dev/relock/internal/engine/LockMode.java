package dev.relock.internal.engine;

import dev.relock.internal.script.LuaScript;

/**
 * The ways to hold something: WRITE excludes everyone else (it is the exclusive lock), READ is
 * shared with other readers, PERMITS holds some of a semaphore's permits. Each has its own
 * scripts, and its own kind letter in the scripts' arguments; all take the keys of
 * {@link LockKeys#all()} and the same leading arguments.
 *
 * <p>Public because both engines and the metrics, each in a package of its own, use it.
 */
public enum LockMode {
    WRITE(LuaScript.ACQUIRE, LuaScript.RELEASE, LuaScript.WITHDRAW, "w", "lock"),
    READ(LuaScript.ACQUIRE_READ, LuaScript.RELEASE_READ, LuaScript.WITHDRAW, "r", "read lock"),
    PERMITS(LuaScript.PERMITS_ACQUIRE, LuaScript.PERMITS_RELEASE, LuaScript.PERMITS_WITHDRAW, "s", "semaphore");

    // the single-server scripts of the mode (Redlock has its own)
    public final LuaScript acquire;
    public final LuaScript release;
    public final LuaScript withdraw;
    // its letter in the scripts' arguments, and how messages name it
    public final String kind;
    public final String description;

    LockMode(LuaScript acquire, LuaScript release, LuaScript withdraw, String kind, String description) {
        this.acquire = acquire;
        this.release = release;
        this.withdraw = withdraw;
        this.kind = kind;
        this.description = description;
    }
}
