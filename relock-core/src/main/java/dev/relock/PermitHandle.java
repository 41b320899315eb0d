package dev.relock;

import java.time.Duration;

/**
 * Permits of a {@link RelockSemaphore} held by one acquisition. Any thread may close it; closing
 * it gives the permits back, once.
 */
public interface PermitHandle extends LockHandle {

    /** How many permits this handle holds. */
    int permits();

    /**
     * Extends the lease of these permits as {@link LockHandle#extendLease} extends a lock's: the semaphore keeps
     * them out at least {@code lease} from the send, never less than before, and the permits of a holder that dies
     * come back only when the longer lease has run out.
     */
    @Override
    void extendLease(Duration lease);
}
