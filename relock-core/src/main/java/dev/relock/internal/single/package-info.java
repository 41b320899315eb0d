/**
 * The engine for one Redis: standalone, Sentinel (Lettuce follows the master) and Cluster (routing by slot,
 * sharded wake-up channels, a replication guard's connection per master). It owns the connections, the
 * single-server scripts of each lock mode with their arguments ({@link dev.relock.internal.single.ModeScripts}),
 * sent through {@link dev.relock.internal.redis.RedisCalls}, the acquisition state machine with its FIFO
 * queue and grants on release ({@link dev.relock.internal.single.Acquisition}), semaphores, the waits of latches and
 * conditions (state machines that block no thread, over {@link dev.relock.internal.single.SerialWait}), wake-ups (the
 * waiting room and shard channels) and what a renewal is on one server. {@link
 * dev.relock.internal.single.SingleServerEngine} is a facade over collaborators of one concept each: connecting
 * ({@code ServerConnector}, {@code ServerConnections}), routing ({@code Routes}), giving holds up and handing them
 * over ({@code Releases}), re-entry and extension ({@code HoldExtensions}), loss reports, operator views, the identity
 * record and the multi-lock script. Used from outside: {@link
 * dev.relock.internal.single.SingleServerEngine}'s factories and {@link dev.relock.internal.single.ServerFeatures}.
 */
package dev.relock.internal.single;
