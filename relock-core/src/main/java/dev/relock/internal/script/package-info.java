/**
 * Lua scripts as resources ({@link dev.relock.internal.script.LuaScript}, the one loader): loaded once with the
 * library files they use (a line {@code -- uses <file>.lua} puts that file of {@code lib/} there), run by EVALSHA
 * with a NOSCRIPT fallback. One class per family, named for the topology its scripts run on, holds them as
 * constants: {@link dev.relock.internal.script.SingleServerScripts}, {@link dev.relock.internal.script.RedlockScripts},
 * {@link dev.relock.internal.script.SharedScripts} (both engines) and
 * {@link dev.relock.internal.script.FencingScripts} ({@code RedisFence}); each family's files are in the resource
 * directory of its name below this package. Every script over a lock takes its keys in one order (see
 * {@link dev.relock.internal.script.LuaScript}).
 */
package dev.relock.internal.script;
