package dev.relock.internal;

import io.lettuce.core.pubsub.RedisPubSubAdapter;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;

/**
 * The client's waiting threads, found by owner id, and the listener that routes wake-up messages
 * from the client's own channel to them (see queue.lua for the messages).
 *
 * <p>An owner waits for at most one lock at a time, so the owner id alone finds its waiter; the
 * lock key in the message guards against a stale message for an earlier wait. Messages arrive on
 * a Lettuce event-loop thread, which must never block: routing only signals.
 */
final class WaitingRoom extends RedisPubSubAdapter<String, String> {

    private final Map<String, Waiter> byOwner = new ConcurrentHashMap<>();

    Waiter enter(String owner, LockKeys keys, LockMode mode) {
        Waiter waiter = new Waiter(keys, mode);
        byOwner.put(owner, waiter);
        return waiter;
    }

    void leave(String owner, Waiter waiter) {
        byOwner.remove(owner, waiter);
    }

    /** Wakes every waiter, so each sees the client closed. */
    void wakeAll() {
        byOwner.values().forEach(Waiter::wake);
    }

    /** Every waiter now, with its owner. */
    void forEach(BiConsumer<String, Waiter> action) {
        byOwner.forEach(action);
    }

    @Override
    public void message(String channel, String message) {
        String[] parts = message.split("\n");
        if (parts.length < 3) {
            return;
        }
        Waiter waiter = byOwner.get(parts[2]);
        if (waiter == null || !waiter.keys.lock().equals(parts[1])) {
            return;
        }
        if (parts[0].equals("H")) {
            waiter.wake();
        } else if (parts[0].equals("S") && parts.length == 4) {
            waiter.checkWithin(TimeUnit.MILLISECONDS.toNanos(Long.parseLong(parts[3])));
        }
    }
}
