package dev.relock;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A contender's round that takes a lock or gives up waiting for it, in one of three ways by the round's number:
 * {@code lock()}, which never gives up; {@code tryLock} with a wait of a few milliseconds; an asynchronous
 * acquisition cancelled after a few milliseconds. Tests run many of them at once to give up while grants on release
 * are on their way to the waiter.
 */
public final class GivingUp {

    /** A hold taken in a round: its fencing token, and its release. */
    public interface Taken extends AutoCloseable {

        long fencingToken();

        @Override
        void close();
    }

    private GivingUp() {
    }

    /**
     * Takes {@code lock} as round {@code round} does, waiting less than {@code maxWaitMillis} where it gives up; the
     * hold taken, or null when the round gave up.
     */
    public static Taken takeOrGiveUp(RelockLock lock, int round, int maxWaitMillis) throws Exception {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        switch (round % 3) {
            case 0 -> {
                lock.lock();
                return heldBy(lock);
            }
            case 1 -> {
                return lock.tryLock(random.nextInt(maxWaitMillis), TimeUnit.MILLISECONDS) ? heldBy(lock) : null;
            }
            default -> {
                CompletableFuture<Optional<LockHandle>> pending =
                        lock.tryAcquireAsync(Duration.ofMillis(50)).toCompletableFuture();
                LockHandle handle;
                try {
                    handle = pending.get(random.nextInt(maxWaitMillis), TimeUnit.MILLISECONDS).orElse(null);
                } catch (TimeoutException e) {
                    // completed just now if the cancel fails: the handle is ours to close
                    handle = pending.cancel(false) ? null : pending.join().orElse(null);
                }
                return handle == null ? null : heldBy(handle);
            }
        }
    }

    private static Taken heldBy(RelockLock lock) {
        return new Taken() {
            @Override
            public long fencingToken() {
                return lock.fencingToken().orElseThrow();
            }

            @Override
            public void close() {
                lock.unlock();
            }
        };
    }

    private static Taken heldBy(LockHandle handle) {
        return new Taken() {
            @Override
            public long fencingToken() {
                return handle.fencingToken();
            }

            @Override
            public void close() {
                handle.close();
            }
        };
    }
}
