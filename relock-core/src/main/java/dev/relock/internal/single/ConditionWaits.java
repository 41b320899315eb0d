package dev.relock.internal.single;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The awaits of this client in conditions' wait sets, by owner id, and the routing of signals ({@code 'W'} messages,
 * see condition.lua) to them. An owner (a thread, or a handle) awaits in one condition at a time.
 *
 * <p>An await is entered before it joins the wait set in Redis and left after its wait ends, so a signal that
 * follows the join finds it. A signal for its lock and await id marks it signalled (one for an earlier await of the
 * same owner, arriving late, is ignored); a resubscription of the client's channel (signals published while it was
 * down reached nobody), a confirmation of the lock's shard channel and the client's close only make it look again
 * ({@code 'stay'}).
 *
 * <p>Threads: {@link #signalled} and {@link #wakeAll} run on Lettuce I/O threads (and the closing thread) and never
 * block.
 */
final class ConditionWaits {

    /** One await in a condition of one lock ({@link ConditionAwait}). */
    interface Waiter extends ChannelWaiter {

        /** Whose await it is: a thread's or a handle's owner id. */
        String owner();

        /** The key of the lock whose condition it awaits. */
        String lockKey();

        /** This await's id (condition.lua): a signal names it, so one for an earlier await of the owner is ignored. */
        String awaitId();

        /** A signal for this await came: its owner is in the lock's queue now. Never blocks. */
        void signalled();
    }

    private final Map<String, Waiter> byOwner = new ConcurrentHashMap<>();
    private final AtomicLong awaitIds = new AtomicLong();

    /** A new id for one await of this client. */
    String nextAwaitId() {
        return Long.toString(awaitIds.incrementAndGet());
    }

    void enter(Waiter waiter) {
        byOwner.put(waiter.owner(), waiter);
    }

    void leave(Waiter waiter) {
        byOwner.remove(waiter.owner(), waiter);
    }

    /** The await {@code awaitId} of {@code owner} was signalled in a condition of the lock at {@code lockKey}. */
    void signalled(String lockKey, String owner, String awaitId) {
        Waiter waiter = byOwner.get(owner);
        if (waiter != null && waiter.lockKey().equals(lockKey) && waiter.awaitId().equals(awaitId)) {
            waiter.signalled();
        }
    }

    /** Every waiter looks again: signals may have been lost, or the client closes. */
    void wakeAll() {
        byOwner.values().forEach(Waiter::wake);
    }
}
