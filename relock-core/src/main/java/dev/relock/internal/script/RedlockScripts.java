package dev.relock.internal.script;

/**
 * The scripts a Redlock client runs on each of its independent nodes, one node per call: the resources in
 * {@code redlock/}. Their keys are in the order {@link LuaScript} gives.
 *
 * <p>Public because the Redlock engine, in a package of its own, runs them; tests and the benchmarks send them too.
 */
public final class RedlockScripts {

    public static final LuaScript ACQUIRE = load("acquire.lua");
    public static final LuaScript ACQUIRE_READ = load("acquire-read.lua");
    public static final LuaScript FENCE = load("fence.lua");
    public static final LuaScript RENEW = load("renew.lua");
    public static final LuaScript RELEASE = load("release.lua");
    public static final LuaScript RESTORE = load("restore.lua");
    public static final LuaScript RELEASE_AFTER = load("release-after.lua");

    private RedlockScripts() {}

    private static LuaScript load(String file) {
        return LuaScript.load("redlock/" + file);
    }
}
