package dev.relock.internal.single;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The threads of this client that wait in a condition's wait set, by owner id, and the routing of signals
 * ({@code 'W'} messages, see condition.lua) to them. An owner is one thread, which waits in one condition at a time.
 *
 * <p>A waiter is entered before it joins the wait set in Redis and left after its wait ends, so a signal that
 * follows the join finds it. A signal for its lock and await id marks it signalled (one for an earlier await of the
 * same thread, arriving late, is ignored); a resubscription of the client's channel
 * (signals published while it was down reached nobody), a confirmation of the lock's shard channel and the client's
 * close only make it look again ({@code 'stay'}).
 *
 * <p>Threads: {@link #signalled} and {@link #wakeAll} run on Lettuce I/O threads and never block.
 */
final class ConditionWaits {

    /** One thread waiting in a condition of one lock. */
    static final class Waiter implements ChannelWaiter {
        final Thread thread;
        final String owner;
        final String lockKey;
        // this await's id (condition.lua): a signal names it, so one for an earlier await of the thread is ignored
        final String awaitId;
        // a signal for this owner and lock came: it is in the lock's queue now
        volatile boolean signalled;
        // something may have changed: the thread asks Redis whether it is still in the wait set
        volatile boolean recheck;

        Waiter(Thread thread, String owner, String lockKey, String awaitId) {
            this.thread = thread;
            this.owner = owner;
            this.lockKey = lockKey;
            this.awaitId = awaitId;
        }

        @Override
        public void wake() {
            recheck = true;
            LockSupport.unpark(thread);
        }
    }

    private final Map<String, Waiter> byOwner = new ConcurrentHashMap<>();
    private final AtomicLong awaitIds = new AtomicLong();

    /** A new id for one await of this client. */
    String nextAwaitId() {
        return Long.toString(awaitIds.incrementAndGet());
    }

    void enter(Waiter waiter) {
        byOwner.put(waiter.owner, waiter);
    }

    void leave(Waiter waiter) {
        byOwner.remove(waiter.owner, waiter);
    }

    /** The await {@code awaitId} of {@code owner} was signalled in a condition of the lock at {@code lockKey}. */
    void signalled(String lockKey, String owner, String awaitId) {
        Waiter waiter = byOwner.get(owner);
        if (waiter != null && waiter.lockKey.equals(lockKey) && waiter.awaitId.equals(awaitId)) {
            waiter.signalled = true;
            LockSupport.unpark(waiter.thread);
        }
    }

    /** Every waiter looks again: signals may have been lost, or the client closes. */
    void wakeAll() {
        byOwner.values().forEach(Waiter::wake);
    }
}
