/**
 * The engine for one Redis: standalone, Sentinel (Lettuce follows the master) and Cluster (routing by slot,
 * sharded wake-up channels, a replication guard's connection per master). It owns the connections, the
 * single-server scripts' calls ({@link dev.relock.internal.single.RedisCalls}), the acquisition state machine
 * with its FIFO queue and grants on release ({@link dev.relock.internal.single.Acquisition}), semaphores,
 * wake-ups (the waiting room and shard channels) and what a renewal is on one server. Only
 * {@link dev.relock.internal.single.SingleServerEngine}'s factories and {@link
 * dev.relock.internal.single.ServerFeatures} are used from outside.
 */
package dev.relock.internal.single;
