package dev.relock.internal.script;

/**
 * The scripts a Redlock client runs on each of its independent nodes, one node per call: the resources in
 * {@code redlock/}. Their keys are in the order {@link LuaScript} gives.
 *
 * <p>Public because the Redlock engine, in a package of its own, runs them; tests and the benchmarks send them too.
 */
public final class RedlockScripts {

    public static final LuaScript ACQUIRE = LuaScript.load("redlock/acquire.lua");
    public static final LuaScript ACQUIRE_READ = LuaScript.load("redlock/acquire-read.lua");
    public static final LuaScript FENCE = LuaScript.load("redlock/fence.lua");
    public static final LuaScript RENEW = LuaScript.load("redlock/renew.lua");
    public static final LuaScript RELEASE = LuaScript.load("redlock/release.lua");
    public static final LuaScript RESTORE = LuaScript.load("redlock/restore.lua");
    public static final LuaScript RELEASE_AFTER = LuaScript.load("redlock/release-after.lua");

    private RedlockScripts() {}
}
