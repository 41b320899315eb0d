package dev.relock.bench;

import dev.relock.RelockClient;
import dev.relock.RelockLock;
import dev.relock.testredis.RedisServer;
import java.util.ArrayList;
import java.util.List;

/**
 * Prints the acquire + release latency of a Redlock read lock beside the exclusive lock, over five local
 * servers, uncontended: p50 and p90 of 500 pairs each, two rounds after 100 pairs of warm-up. A measurement,
 * not a benchmark run by {@code run.sh}; start it with {@code java -cp <the harness's classpath>
 * dev.relock.bench.RedlockReadLockLatency}. (It was a test in relock-core that only printed numbers.)
 */
public final class RedlockReadLockLatency {

    private static final int NODES = 5;
    private static final int WARM_UP = 100;
    private static final int PAIRS = 500;

    private RedlockReadLockLatency() {
    }

    public static void main(String[] args) {
        List<RedisServer> servers = new ArrayList<>();
        try {
            for (int i = 0; i < NODES; i++) {
                servers.add(RedisServer.start());
            }
            try (RelockClient client = RelockClient.builder()
                    .redlockUris(servers.stream().map(RedisServer::uri).toList()).build()) {
                RelockLock exclusive = client.lock("measured-exclusive");
                RelockLock read = client.readWriteLock("measured-read").readLock();
                for (int round = 0; round < 2; round++) {
                    long[] exclusiveNanos = LockUnlockPairs.sortedNanos(exclusive, WARM_UP, PAIRS);
                    long[] readNanos = LockUnlockPairs.sortedNanos(read, WARM_UP, PAIRS);
                    System.out.printf("round %d: exclusive p50 %.0f us p90 %.0f us; read p50 %.0f us p90 %.0f us"
                            + " (%d pairs each)%n", round,
                            LockUnlockPairs.percentileMicros(exclusiveNanos, 50),
                            LockUnlockPairs.percentileMicros(exclusiveNanos, 90),
                            LockUnlockPairs.percentileMicros(readNanos, 50),
                            LockUnlockPairs.percentileMicros(readNanos, 90),
                            PAIRS);
                }
            }
        } finally {
            servers.forEach(RedisServer::close);
        }
    }
}
