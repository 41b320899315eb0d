package dev.relock;

/**
 * Permits of a {@link RelockSemaphore} held by one acquisition. Any thread may close it; closing
 * it gives the permits back, once.
 */
public interface PermitHandle extends LockHandle {

    /** How many permits this handle holds. */
    int permits();
}
