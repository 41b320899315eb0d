/**
 * The one client core, whatever the deployment: {@link dev.relock.internal.engine.EngineClient} (the only
 * {@code RelockClient}: ids, the table of holds, lease-lost listeners, name checks, closing order),
 * {@link dev.relock.internal.engine.EngineLock} (the only lock object), the {@link
 * dev.relock.internal.engine.Engine} interface each deployment implements, and what both engines build on:
 * {@link dev.relock.internal.engine.Hold} and its table, handles, lock keys and modes, the decoding of inspect.lua's
 * replies ({@link dev.relock.internal.engine.InspectReply}), the acquisition base
 * ({@link dev.relock.internal.engine.SteppedAcquisition}), the multi-lock, the identity records (what they hold,
 * and when a client writes its own: {@link dev.relock.internal.engine.RecordWrites}), and the rule that no command
 * is sent from a Netty I/O thread ({@link dev.relock.internal.engine.IoThreads}). Nothing here sends a Redis
 * command itself. Types are public where an engine package uses them; nothing here is API.
 */
package dev.relock.internal.engine;
