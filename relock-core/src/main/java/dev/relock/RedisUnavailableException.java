package dev.relock;

/**
 * Redis did not answer within the command timeout or could not be reached. The operation may be
 * tried again; an acquisition that waits does so by itself: {@link RelockLock#lock()} until it has
 * the lock, {@link RelockLock#tryLock(long, java.util.concurrent.TimeUnit)} until its wait ends, when
 * it throws this only if its last try found Redis unavailable. A single try throws it at once.
 */
public class RedisUnavailableException extends RelockException {

    public RedisUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
