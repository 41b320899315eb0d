package dev.relock.internal.script;

/**
 * The scripts a single-server client runs on its one Redis (standalone, Sentinel's master, the Cluster node of a
 * lock's slot): the resources in {@code single/}. Their keys are in the order {@link LuaScript} gives.
 *
 * <p>Public because the single-server engine, in a package of its own, runs them; tests and the benchmarks send
 * them too.
 */
public final class SingleServerScripts {

    public static final LuaScript ACQUIRE = load("acquire.lua");
    public static final LuaScript RELEASE = load("release.lua");
    public static final LuaScript ACQUIRE_READ = load("acquire-read.lua");
    public static final LuaScript RELEASE_READ = load("release-read.lua");
    public static final LuaScript WITHDRAW = load("withdraw.lua");
    public static final LuaScript RELEASE_AFTER = load("release-after.lua");
    public static final LuaScript FORCE_UNLOCK = load("force-unlock.lua");
    public static final LuaScript RENEW = load("renew.lua");
    public static final LuaScript MULTI_ACQUIRE = load("multi-acquire.lua");
    public static final LuaScript PERMITS_ACQUIRE = load("permits-acquire.lua");
    public static final LuaScript PERMITS_RELEASE = load("permits-release.lua");
    public static final LuaScript PERMITS_WITHDRAW = load("permits-withdraw.lua");
    public static final LuaScript PERMITS_ADMIN = load("permits-admin.lua");
    public static final LuaScript PERMITS_INSPECT = load("permits-inspect.lua");
    public static final LuaScript LATCH = load("latch.lua");
    public static final LuaScript CONDITION = load("condition.lua");

    private SingleServerScripts() {}

    private static LuaScript load(String file) {
        return LuaScript.load("single/" + file);
    }
}
