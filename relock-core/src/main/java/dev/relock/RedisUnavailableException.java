package dev.relock;

/**
 * Redis did not answer within the command timeout or could not be reached. The operation may be
 * tried again; {@link RelockLock#lock()} does so by itself.
 */
public class RedisUnavailableException extends RelockException {

    public RedisUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
