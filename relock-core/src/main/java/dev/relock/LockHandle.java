package dev.relock;

import java.time.Duration;
import java.util.concurrent.CompletionStage;

/**
 * One acquisition of a lock, for try-with-resources. Closing it gives up this hold; closing it
 * again does nothing.
 *
 * <pre>{@code
 * try (LockHandle held = lock.acquire()) {
 *     storage.write(record, held.fencingToken());
 * }
 * }</pre>
 */
public interface LockHandle extends AutoCloseable {

    /** The name of the lock this handle holds. */
    String name();

    /**
     * The fencing token of this acquisition; re-entries share the token of the first hold. Every fresh
     * acquisition of a name gets a greater token than every earlier one: {@code max(last + 1, server time in
     * µs)}. After Redis lost the last token (restart without persistence, failover to a replica that missed it,
     * 24 h unused) the server clock alone keeps tokens rising, so only while the clock of the server that hands
     * out the next token is not behind that of the server that handed out the last by more than the time between
     * the two.
     */
    long fencingToken();

    /** Where the hold is now. */
    LeaseState state();

    /** Whether the hold is still {@link LeaseState#HELD}: not released and the lease not known lost. */
    default boolean isValid() {
        return state() == LeaseState.HELD;
    }

    /**
     * Completes when the lease of this hold is found lost while it was held; never completes if it
     * is released first. Callbacks run on the client's lease-keeper thread and must not block.
     */
    CompletionStage<LeaseLost> whenLost();

    /**
     * Gives up this hold.
     *
     * @throws LeaseLostException if the lease was lost before the hold was given up
     * @throws RelockException if Redis could not be reached; the lease then runs out on its own
     */
    @Override
    void close();

    /**
     * Gives up this hold as {@link #close()} does, except that when it is the owner's last hold of
     * the lock, the lock stays taken in Redis until {@code delay} from now and then frees itself:
     * its lease is set to the delay and no longer renewed. For "hold at least this long" (a job
     * that must not run again before its period is over, even if it finished early). Waiters are
     * told to try again when the delay is over. A delay of zero or less is {@link #close()}.
     * Closing the handle afterwards does nothing.
     *
     * @throws LeaseLostException if the lease was lost before the hold was given up
     * @throws IllegalStateException for the write hold of a read-write lock whose owner also holds the read
     *     lock (a downgrade): the hold is kept; release the read lock first, or close the write hold
     * @throws RelockException if Redis could not be reached; the lease then runs out on its own
     */
    void releaseAfter(Duration delay);
}
