package dev.relock.redlock;

import dev.relock.RelockClient;
import dev.relock.RelockLock;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * Not a test (surefire runs *Test classes only): prints the acquire + release latency of a
 * Redlock read lock against the exclusive lock over five local servers, uncontended. Run with
 * {@code -Dtest=RedlockReadLockMeasurement}.
 */
class RedlockReadLockMeasurement extends RedlockTestBase {

    private static final int WARM_UP = 100;
    private static final int PAIRS = 500;

    @Override
    int nodeCount() {
        return 5;
    }

    @Test
    void readLockAgainstExclusiveLock() {
        RelockClient client = newClient();
        RelockLock exclusive = client.lock("measured-exclusive");
        RelockLock read = client.readWriteLock("measured-read").readLock();
        for (int round = 0; round < 2; round++) {
            long[] exclusiveNanos = pairs(exclusive);
            long[] readNanos = pairs(read);
            System.out.printf("round %d: exclusive p50 %.0f us p90 %.0f us; read p50 %.0f us p90 %.0f us (%d pairs each)%n",
                    round, percentile(exclusiveNanos, 50), percentile(exclusiveNanos, 90),
                    percentile(readNanos, 50), percentile(readNanos, 90), PAIRS);
        }
    }

    private static long[] pairs(RelockLock lock) {
        for (int i = 0; i < WARM_UP; i++) {
            lock.lock();
            lock.unlock();
        }
        long[] nanos = new long[PAIRS];
        for (int i = 0; i < PAIRS; i++) {
            long start = System.nanoTime();
            lock.lock();
            lock.unlock();
            nanos[i] = System.nanoTime() - start;
        }
        return nanos;
    }

    private static double percentile(long[] nanos, int percent) {
        long[] sorted = nanos.clone();
        Arrays.sort(sorted);
        return sorted[Math.min(sorted.length - 1, sorted.length * percent / 100)] / 1000.0;
    }
}
