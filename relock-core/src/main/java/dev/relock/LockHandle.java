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
     *
     * <p>A plain {@code long}, where {@link RelockLock#fencingToken()} is an {@code OptionalLong}: a handle is made
     * only by an acquisition that got its token and keeps it after it is closed or lost, while a lock view may name a
     * lock that nobody holds.
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
     * Extends the lease of this hold: once this returns, Redis keeps the hold at least {@code lease} from when the
     * request was sent (on Redlock a majority of the servers do, and the hold counts as valid until {@code lease}
     * minus the clock drift from the send, as after a renewal). An extension never shortens a lease: a hold with
     * more than {@code lease} left keeps what it has (to give a hold up early, close it, or use
     * {@link #releaseAfter}). A hold taken with an explicit lease stays explicit and is not renewed: it ends at the
     * later of its former end and {@code lease} from now, unless extended again. A renewed hold stays renewed, and
     * every renewal from then on asks for the longer of its lease and {@code lease}: a holder that dies then keeps
     * the lock that long. The client counts the new lease from the send, never from the reply, so the holder is
     * still told of a loss at its deadline before Redis can let anybody else in. One round trip (to every server at
     * once on Redlock); any thread may call it.
     *
     * @param lease how long from now Redis must keep the hold at least
     * @throws NullPointerException if lease is null
     * @throws IllegalArgumentException if lease is zero or negative, or on Redlock not longer than the clock drift
     *     allowance
     * @throws IllegalStateException if this handle was closed (or given up with {@link #releaseAfter}), also by
     *     another thread while the extension was under way, or the client was closed
     * @throws LeaseLostException if the lease was lost before, or Redis no longer has the hold (its lease ran out,
     *     the key was lost, the lock was forced open): the hold is reported lost then, once, as a renewal reports it
     *     (the {@link LeaseLostListener}, {@link #whenLost()}); close the handle all the same
     * @throws RedisUnavailableException if Redis (a majority of the servers) did not answer within the command
     *     timeout: the client counts the lease it had (a renewed hold goes on being renewed); the extension may or
     *     may not have reached Redis, and may be tried again
     */
    void extendLease(Duration lease);

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
