package dev.relock.internal.script;

/**
 * The scripts both engines run, the same on a single server as on each Redlock node: the resources in
 * {@code shared/}. A lock's look for operators' tools, and the client's identity record.
 *
 * <p>Public because both engines, each in a package of its own, run them; tests send them too.
 */
public final class SharedScripts {

    public static final LuaScript INSPECT = LuaScript.load("shared/inspect.lua");
    public static final LuaScript REGISTER = LuaScript.load("shared/register.lua");
    public static final LuaScript NAME_HOLDERS = LuaScript.load("shared/name-holders.lua");

    private SharedScripts() {}
}
