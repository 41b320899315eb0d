package dev.relock.internal.single;

import io.lettuce.core.pubsub.RedisPubSubAdapter;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;

/**
 * The client's queued acquisitions (and, once the client is closing, those that ended without a hold and wait
 * for close() to withdraw them), found by owner id, and the listener that routes wake-up
 * messages to them (see queue.lua for the messages), from the client's own channel or, with sharded
 * pub/sub on a Cluster, from the lock channels it listens to, where a message for another client's
 * owner finds no acquisition here and is dropped. A count-down latch's wake-up ({@code 'O'}, see latch.lua) goes
 * to {@link LatchWaits}, a condition's signal ({@code 'W'}, see condition.lua) to {@link ConditionWaits}.
 *
 * <p>An owner waits for at most one lock at a time, so the owner id alone finds its acquisition;
 * the lock key in the message guards against a stale message for an earlier wait. Messages arrive
 * on a Lettuce event-loop thread, which must never block: routing only starts the next attempt or
 * moves a timer.
 */
final class WaitingRoom extends RedisPubSubAdapter<String, String> {

    private static final Runnable NOTHING = () -> { };

    /** Told of an {@code 'F'} message (force-unlock.lua): the write hold of {@code owner} with {@code token} is gone. */
    interface ForcedOpen {
        void forcedOpen(String lockKey, String owner, long token);
    }

    private final Map<String, Acquisition> byOwner = new ConcurrentHashMap<>();
    // the waits for count-down latches, told by 'O' messages (latch.lua)
    private final LatchWaits latches;
    // the awaits in conditions, told by 'W' messages (condition.lua)
    private final ConditionWaits conditions;

    // the client, told of holds of its that an operator forced open
    private final ForcedOpen forcedOpen;

    WaitingRoom(LatchWaits latches, ConditionWaits conditions, ForcedOpen forcedOpen) {
        this.latches = latches;
        this.conditions = conditions;
        this.forcedOpen = forcedOpen;
    }

    void enter(String owner, Acquisition acquisition) {
        byOwner.put(owner, acquisition);
    }

    void leave(String owner, Acquisition acquisition) {
        byOwner.remove(owner, acquisition);
    }

    /** Every queued acquisition now, with its owner. */
    void forEach(BiConsumer<String, Acquisition> action) {
        byOwner.forEach(action);
    }

    /**
     * The client's own channel was subscribed (again, after a reconnect): a wake-up, a grant, a latch's opening or a
     * signal published while it was not reached nobody, so every acquisition queued in Redis tries again (taking a
     * grant it missed: the lock would otherwise stay idle, granted to it, until the holder's lease end; one in its
     * client's line waits on, see {@link Acquisition#resubscribed}), and every latch and condition waiter looks again.
     * Lettuce I/O thread: each wake is a step handed on, never run here.
     */
    @Override
    public void subscribed(String channel, long count) {
        byOwner.values().forEach(Acquisition::resubscribed);
        latches.wakeAll();
        conditions.wakeAll();
    }

    /** A wake-up on a lock's own shard channel (sharded pub/sub on a Cluster): the same messages. */
    @Override
    public void smessage(String shardChannel, String message) {
        message(shardChannel, message);
    }

    @Override
    public void message(String channel, String message) {
        String[] parts = message.split("\n");
        if (parts.length < 3) {
            return;
        }
        if (parts[0].equals("W")) {
            if (parts.length == 4) {
                conditions.signalled(parts[1], parts[2], parts[3]);
            }
            return;
        }
        if (parts[0].equals("F")) {
            if (parts.length == 4) {
                forcedOpen.forcedOpen(parts[1], parts[2], Long.parseLong(parts[3]));
            }
            return;
        }
        if (parts[0].equals("O")) {
            if (parts.length == 4) {
                latches.opened(parts[1], parts[3]);
            }
            return;
        }
        Acquisition acquisition = byOwner.get(parts[2]);
        if (acquisition == null || !acquisition.keys().lock().equals(parts[1])) {
            return;
        }
        if (parts[0].equals("H")) {
            acquisition.wake();
        } else if (parts[0].equals("S") && parts.length == 4) {
            acquisition.checkWithin(TimeUnit.MILLISECONDS.toNanos(Long.parseLong(parts[3])));
        } else if (parts[0].equals("G") && parts.length == 5) {
            acquisition.granted(Long.parseLong(parts[4]), Long.parseLong(parts[3]), NOTHING);
        }
    }

    /**
     * A grant on release to {@code owner}, one of this client's, that came back in the reply of this client's own
     * release instead of a {@code 'G'} message (release.lua): delivered as that message would be. An owner no longer
     * waiting here gave up, and its withdraw undoes the grant. {@code over} runs once the acquisition handled it (a
     * hold it took is in the client's table then), or at once without one. Any thread; never blocks.
     */
    void granted(String lockKey, String owner, long attempt, long token, Runnable over) {
        Acquisition acquisition = byOwner.get(owner);
        if (acquisition != null && acquisition.keys().lock().equals(lockKey)) {
            acquisition.granted(attempt, token, over);
        } else {
            over.run();
        }
    }

    /** Whether an acquisition here waits for the lock at {@code lockKey}. */
    boolean waitsFor(String lockKey) {
        if (byOwner.isEmpty()) {
            return false;
        }
        for (Acquisition acquisition : byOwner.values()) {
            if (acquisition.keys().lock().equals(lockKey)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Every waiter here for the lock at {@code lockKey} tries again now: a release may have granted it to one of them
     * without its reply telling (see {@code Releases.deliverGrant}), and an attempt that crosses a grant
     * takes it (acquire.lua). Any thread; never blocks.
     */
    void wakeWaitersOf(String lockKey) {
        byOwner.forEach((owner, acquisition) -> {
            if (acquisition.keys().lock().equals(lockKey)) {
                acquisition.wake();
            }
        });
    }
}
