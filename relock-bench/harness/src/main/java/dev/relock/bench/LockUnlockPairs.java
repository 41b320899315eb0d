package dev.relock.bench;

import dev.relock.RelockLock;
import java.util.Arrays;

/**
 * Sequential lock + unlock pairs on one lock, timed one by one: the figure of the on-request measurements
 * ({@link RedlockReadLockLatency}, {@link ClusterGuardLatency}). Runs in the caller's thread.
 */
final class LockUnlockPairs {

    private LockUnlockPairs() {
    }

    /** The nanoseconds of each of {@code pairs} measured pairs, sorted, after {@code warmUp} unmeasured ones. */
    static long[] sortedNanos(RelockLock lock, int warmUp, int pairs) {
        for (int i = 0; i < warmUp; i++) {
            lock.lock();
            lock.unlock();
        }
        long[] nanos = new long[pairs];
        for (int i = 0; i < pairs; i++) {
            long start = System.nanoTime();
            lock.lock();
            lock.unlock();
            nanos[i] = System.nanoTime() - start;
        }
        Arrays.sort(nanos);
        return nanos;
    }

    /** The {@code percent} percentile of {@link #sortedNanos}'s result, in microseconds. */
    static double percentileMicros(long[] sortedNanos, int percent) {
        return sortedNanos[Math.min(sortedNanos.length - 1, sortedNanos.length * percent / 100)] / 1000.0;
    }
}
