package dev.relock.internal.script;

/**
 * The scripts both engines run, the same on a single server as on each Redlock node: the resources in
 * {@code shared/}. A lock's look for operators' tools, and the client's identity record.
 *
 * <p>Public because both engines, each in a package of its own, run them; tests send them too.
 */
public final class SharedScripts {

    public static final LuaScript INSPECT = load("inspect.lua");
    public static final LuaScript REGISTER = load("register.lua");
    public static final LuaScript NAME_HOLDERS = load("name-holders.lua");

    private SharedScripts() {}

    private static LuaScript load(String file) {
        return LuaScript.load("shared/" + file);
    }
}
