package dev.relock.internal;

import dev.relock.internal.script.LuaScript;

/**
 * The two ways to hold a lock: WRITE excludes everyone else (it is the exclusive lock), READ is
 * shared with other readers. Each mode has its own scripts, and its own kind letter in the
 * scripts' arguments.
 */
enum LockMode {
    WRITE(LuaScript.ACQUIRE, LuaScript.RELEASE, "w", "write lock"),
    READ(LuaScript.ACQUIRE_READ, LuaScript.RELEASE_READ, "r", "read lock");

    final LuaScript acquire;
    final LuaScript release;
    final String kind;
    final String description;

    LockMode(LuaScript acquire, LuaScript release, String kind, String description) {
        this.acquire = acquire;
        this.release = release;
        this.kind = kind;
        this.description = description;
    }
}
