package dev.relock;

/**
 * Redis could not do what a lock operation needed: it did not answer in time, the connection
 * failed, or it refused the command (for example a key of another type at the lock's name). The
 * message names the lock and the operation; it never contains credentials.
 */
public class RelockException extends RuntimeException {

    public RelockException(String message) {
        super(message);
    }

    public RelockException(String message, Throwable cause) {
        super(message, cause);
    }
}
