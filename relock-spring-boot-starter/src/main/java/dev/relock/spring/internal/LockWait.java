package dev.relock.spring.internal;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The wait of one call of a {@code @DistributedLock} method, from the call on: how much of it is left, and how long
 * to pause before trying again after a try that could not reach Redis (50 ms, doubling to 1 s, never past the end
 * of the wait). Tries are made one after the other; the pause after a try decides whether there is another one.
 *
 * <p>Why the starter tries again: relock-core's {@code tryLock(wait)} and {@code tryAcquireAsync(wait)} on one
 * Redis, Sentinel or Cluster end at the first failure to reach Redis (but for a Cluster slot in migration), whatever
 * is left of the wait, and the auto-configured client, where it never connected, connects on the next call; so each
 * try is a fresh call with what is left of the wait. On Redlock, core tries within the wait itself; its failure
 * then comes when the wait is over, and is the last.
 *
 * <p>However many tries a wait takes, {@code relock.acquire} counts the call once, with its final outcome: the tries
 * are made on the call's {@link CountedLock}.
 *
 * <p>Deadlines are on {@link System#nanoTime()}. Not thread-safe: each call has its own, used by one thread at a
 * time (the tries of an asynchronous call follow one another, each started after the last one ended).
 */
final class LockWait {

    private static final long FIRST_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
    private static final long MAX_PAUSE_NANOS = TimeUnit.SECONDS.toNanos(1);
    // longer waits are this long: far enough to be forever, short enough that deadline arithmetic cannot overflow
    private static final Duration LONGEST = Duration.ofDays(365L * 100);

    private final long deadline;
    private long nextPauseNanos = FIRST_PAUSE_NANOS;

    private LockWait(long deadline) {
        this.deadline = deadline;
    }

    /** A wait of {@code wait} from now; zero tries once. */
    static LockWait startingNow(Duration wait) {
        return new LockWait(System.nanoTime() + (wait.compareTo(LONGEST) > 0 ? LONGEST : wait).toNanos());
    }

    /** What is left of the wait, zero once it is over. */
    Duration remaining() {
        return Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
    }

    /**
     * The pause before the next try, after a try that could not reach Redis: the back-off, cut to what is left of
     * the wait, so the last try is made as the wait ends; negative when the wait is over and no try is left.
     */
    long pauseNanosAfterUnreachable() {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
            return -1;
        }
        long pause = Math.min(nextPauseNanos, left);
        nextPauseNanos = Math.min(MAX_PAUSE_NANOS, nextPauseNanos * 2);
        return pause;
    }
}
