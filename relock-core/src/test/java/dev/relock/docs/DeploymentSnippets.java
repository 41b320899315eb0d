package dev.relock.docs;

import dev.relock.LockHandle;
import dev.relock.RelockClient;
import java.time.Duration;

/**
 * The Java blocks of docs/redlock.md and docs/sentinel-and-cluster.md, compiled: each region between markers is
 * its block line for line.
 */
abstract class DeploymentSnippets {

    /** The reader's storage, which takes a fencing token with every write. */
    interface Storage {
        void write(Object record, long fencingToken);
    }

    Storage storage;

    void redlock(Object record) {
        // snippet docs/redlock.md#redlock-one-lock-over-n-independent-redis-servers
        try (RelockClient client = RelockClient.builder()
                .redlock("redis://10.0.0.1:6379", "redis://10.0.0.2:6379", "redis://10.0.0.3:6379",
                         "redis://10.0.0.4:6379", "redis://10.0.0.5:6379")
                .clockDrift(0.01, Duration.ofMillis(50))  // the default: 1% of the lease + 50 ms
                .build()) {
            try (LockHandle held = client.lock("orders:42").acquire()) {
                storage.write(record, held.fencingToken());
            }
        }
        // snippet end
    }

    RelockClient redisCluster() {
        // snippet docs/sentinel-and-cluster.md#redis-cluster
        RelockClient relock = RelockClient.builder()
                .redisClusterUris("redis://10.0.0.1:6379", "redis://10.0.0.2:6379") // any nodes; the rest is discovered
                .build();
        // snippet end
        return relock;
    }
}
