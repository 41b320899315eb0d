package dev.relock.internal.script;

/**
 * The script {@code RedisFence} runs on the user's own connection, by {@code EVALSHA} and by {@code EVAL} after
 * {@code NOSCRIPT}: the resource in {@code fencing/}.
 *
 * <p>Public because {@code RedisFence}, in the API package {@code dev.relock.fencing}, runs it.
 */
public final class FencingScripts {

    public static final LuaScript FENCED_SET = LuaScript.load("fencing/fenced-set.lua");

    private FencingScripts() {}
}
