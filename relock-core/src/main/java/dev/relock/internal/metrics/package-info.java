/**
 * Where clients report what their locks do ({@link dev.relock.internal.engine.LockEvents}): nothing without a
 * registry, Micrometer meters and observations with one. Micrometer is an optional dependency, named only by
 * {@link dev.relock.internal.metrics.MicrometerLockEvents}, which the JVM loads only when a registry is given.
 * A {@link dev.relock.internal.metrics.CountedCall} makes a caller's several tries of one lock (the Spring starter's
 * {@code @DistributedLock} call) one acquisition in the meters.
 */
package dev.relock.internal.metrics;
