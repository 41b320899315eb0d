package dev.relock;

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

    /** The fencing token of this acquisition; re-entries share the token of the first hold. */
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
}
