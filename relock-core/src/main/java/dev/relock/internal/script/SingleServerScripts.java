package dev.relock.internal.script;

/**
 * The scripts a single-server client runs on its one Redis (standalone, Sentinel's master, the Cluster node of a
 * lock's slot): the resources in {@code single/}. Their keys are in the order {@link LuaScript} gives.
 *
 * <p>Public because the single-server engine, in a package of its own, runs them; tests and the benchmarks send
 * them too.
 */
public final class SingleServerScripts {

    public static final LuaScript ACQUIRE = LuaScript.load("single/acquire.lua");
    public static final LuaScript RELEASE = LuaScript.load("single/release.lua");
    public static final LuaScript ACQUIRE_READ = LuaScript.load("single/acquire-read.lua");
    public static final LuaScript RELEASE_READ = LuaScript.load("single/release-read.lua");
    public static final LuaScript WITHDRAW = LuaScript.load("single/withdraw.lua");
    public static final LuaScript RELEASE_AFTER = LuaScript.load("single/release-after.lua");
    public static final LuaScript FORCE_UNLOCK = LuaScript.load("single/force-unlock.lua");
    public static final LuaScript RENEW = LuaScript.load("single/renew.lua");
    public static final LuaScript MULTI_ACQUIRE = LuaScript.load("single/multi-acquire.lua");
    public static final LuaScript PERMITS_ACQUIRE = LuaScript.load("single/permits-acquire.lua");
    public static final LuaScript PERMITS_RELEASE = LuaScript.load("single/permits-release.lua");
    public static final LuaScript PERMITS_WITHDRAW = LuaScript.load("single/permits-withdraw.lua");
    public static final LuaScript PERMITS_ADMIN = LuaScript.load("single/permits-admin.lua");
    public static final LuaScript PERMITS_INSPECT = LuaScript.load("single/permits-inspect.lua");
    public static final LuaScript LATCH = LuaScript.load("single/latch.lua");
    public static final LuaScript CONDITION = LuaScript.load("single/condition.lua");

    private SingleServerScripts() {}
}
