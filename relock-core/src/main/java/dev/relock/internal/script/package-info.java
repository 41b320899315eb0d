/**
 * Lua scripts as resources ({@link dev.relock.internal.script.LuaScript}): loaded once with their preludes
 * (a line {@code -- uses <file>.lua} prepends that file), run by EVALSHA with a NOSCRIPT fallback. The
 * single-server scripts live beside this package; the Redlock engine's beside its own.
 */
package dev.relock.internal.script;
