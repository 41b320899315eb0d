package dev.relock;

import java.time.Duration;

/**
 * A client's configuration, fixed when it is built.
 *
 * @param keyPrefix prefix of every key and channel the client uses
 * @param defaultLease lease of holds without an explicit lease; renewed every third of it
 * @param commandTimeout how long one Redis command may take before the caller gets a
 *     {@link RedisUnavailableException}
 * @param handoffGrace how long the first waiter in line keeps its turn after a release before the
 *     next one may go ahead (bounds the stall a crashed waiter can cause)
 * @param replicationGuard what every fresh acquisition waits for from the replicas, or null for
 *     nothing (the default)
 */
public record RelockSettings(
        String keyPrefix, Duration defaultLease, Duration commandTimeout, Duration handoffGrace,
        ReplicationGuard replicationGuard) {

    /** Settings without a replication guard. */
    public RelockSettings(String keyPrefix, Duration defaultLease, Duration commandTimeout, Duration handoffGrace) {
        this(keyPrefix, defaultLease, commandTimeout, handoffGrace, null);
    }
}
