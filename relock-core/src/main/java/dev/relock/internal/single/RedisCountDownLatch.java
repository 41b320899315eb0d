package dev.relock.internal.single;

import dev.relock.LatchInfo;
import dev.relock.RelockCountDownLatch;
import dev.relock.RelockException;
import dev.relock.internal.engine.Durations;
import dev.relock.internal.script.LuaScript;
import io.lettuce.core.ScriptOutputType;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A count-down latch on one Redis (see {@link RelockCountDownLatch}; the state in Redis is described in latch.lua).
 * Stateless view: any number may exist for one name, and every thread may use one.
 *
 * <p>A wait reads the latch (latch.lua 'wait', which lists this client as waiting while the count is above zero)
 * and parks until one of: the wake-up of the round it saw armed ({@link LatchWaits#opened}: opened, no round trip);
 * a reason to read again ({@link LatchWaits.Waiter#wake}: another round's wake-up, a resubscription, the client's
 * close); the latch's expiry as last read (a timer, so a wake-up lost otherwise costs no more than that); its deadline.
 */
final class RedisCountDownLatch implements RelockCountDownLatch {

    /** How long latch.lua keeps the ids of an earlier round's count-downs, for one sent again after a reconnect. */
    static final long RESENT_WITHIN_MILLIS = TimeUnit.MINUTES.toMillis(10);
    /** The largest count: Redis scripts count in doubles, exact up to 2^53. */
    static final long MAX_COUNT = (1L << 53) - 1;
    // a timer at the latch's expiry fires a little after it, when Redis has deleted the key
    private static final long EXPIRY_MARGIN_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

    private final SingleServerEngine client;
    private final String name;
    private final String key;

    RedisCountDownLatch(SingleServerEngine client, String name, String key) {
        this.client = client;
        this.name = name;
        this.key = key;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public boolean trySetCount(long count) {
        return trySetCount(count, DEFAULT_IDLE_EXPIRY);
    }

    @Override
    public boolean trySetCount(long count, Duration idleExpiry) {
        Objects.requireNonNull(idleExpiry, "idleExpiry");
        if (count <= 0 || count > MAX_COUNT) {
            throw new IllegalArgumentException("count of count-down latch '" + name + "' must be between 1 and "
                    + MAX_COUNT + ": " + count);
        }
        if (idleExpiry.toNanos() < TimeUnit.MILLISECONDS.toNanos(1)) {
            throw new IllegalArgumentException("idle expiry of count-down latch '" + name
                    + "' must be at least a millisecond: " + idleExpiry);
        }
        long idleMillis = Durations.saturatedNanos(idleExpiry) / 1_000_000;
        long set = script("set", Long.toString(count), Long.toString(idleMillis), client.core.newHolderId(),
                Long.toString(RESENT_WITHIN_MILLIS));
        return set == 1;
    }

    @Override
    public long countDown() {
        return script("down", client.core.newHolderId(), client.wakeRoute(key));
    }

    @Override
    public long getCount() {
        client.core.ensureOpen();
        String count = client.calls().await(client.calls().commands().hget(key, "count"), "count of count-down latch '" + name + "'", null);
        return count == null ? 0 : Long.parseLong(count);
    }

    @Override
    public void await() throws InterruptedException {
        await(0, true);
    }

    @Override
    public boolean await(long timeout, TimeUnit unit) throws InterruptedException {
        Objects.requireNonNull(unit, "unit");
        return await(unit.toNanos(timeout), false);
    }

    @Override
    public boolean await(Duration timeout) throws InterruptedException {
        Objects.requireNonNull(timeout, "timeout");
        return await(Durations.saturatedNanos(timeout), false);
    }

    @Override
    public LatchInfo inspect() {
        List<Object> reply = read("info");
        List<String> waiting = new ArrayList<>();
        for (int i = 3; i < reply.size(); i++) {
            waiting.add((String) reply.get(i));
        }
        waiting.sort(null);
        long pttl = (Long) reply.get(2);
        return new LatchInfo(name, (Long) reply.get(0), pttl != -2, Duration.ofMillis(Math.max(0, pttl)), waiting);
    }

    private boolean await(long waitNanos, boolean forever) throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException("interrupted before waiting for count-down latch '" + name + "'");
        }
        client.core.ensureOpen();
        long start = System.nanoTime();
        LatchWaits.Waiter waiter = new LatchWaits.Waiter(Thread.currentThread(), key);
        String outcome = "failed";
        boolean listening = false;
        client.latchWaits().enter(waiter);
        try {
            long retryNanos = 0;
            while (true) {
                waiter.recheck = false;
                long sent = System.nanoTime();
                List<Object> reply;
                try {
                    reply = read("wait");
                } catch (RelockException e) {
                    // the first read tells the caller at once; later ones are tried again until the wait ends
                    if (waiter.round == null || client.core.isClosed()
                            || !forever && System.nanoTime() - start - waitNanos >= 0) {
                        throw e;
                    }
                    retryNanos = RetryBackoff.after(retryNanos);
                    outcome = park(waiter, start, waitNanos, forever, System.nanoTime() + retryNanos, true);
                    if (outcome != null) {
                        return outcome.equals("opened");
                    }
                    continue;
                }
                retryNanos = 0;
                long count = (Long) reply.get(0);
                String round = (String) reply.get(1);
                long pttl = (Long) reply.get(2);
                if (waiter.round == null) {
                    if (count == 0) {
                        outcome = "opened";
                        return true;
                    }
                    waiter.round = round;
                } else if (!round.equals(waiter.round)) {
                    if (!Arrays.asList(((String) reply.get(3)).split(" ")).contains(waiter.round)) {
                        outcome = "expired";
                        throw new IllegalStateException("count-down latch '" + name + "': the round this thread"
                                + " waited for is gone without a trace of its opening: it expired before reaching zero"
                                + " (nobody set it or counted it down for its idle expiry) or was deleted; or, while"
                                + " this thread could not read it, it opened and then expired, or 16 later rounds"
                                + " opened. Never taken for an opening");
                    }
                    // the round waited for opened, and another was armed since
                    outcome = "opened";
                    return true;
                } else if (count == 0) {
                    outcome = "opened";
                    return true;
                }
                if (!forever && System.nanoTime() - start - waitNanos >= 0) {
                    outcome = "timeout";
                    return false;
                }
                if (!listening) {
                    listening = true;
                    if (client.listenForWakeUps(key, waiter, sent)) {
                        continue; // the shard channel was confirmed after the read: a wake-up may have been missed
                    }
                }
                // pttl -1: a key someone made persistent has no expiry to wake at
                long wakeAt = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Math.max(0, pttl)) + EXPIRY_MARGIN_NANOS;
                outcome = park(waiter, start, waitNanos, forever, wakeAt, pttl > 0);
                if (outcome != null) {
                    return outcome.equals("opened");
                }
            }
        } catch (InterruptedException e) {
            outcome = "interrupted";
            throw e;
        } finally {
            client.latchWaits().leave(waiter);
            if (listening) {
                client.stopListeningForWakeUps(key, waiter);
            }
            client.events().latchWaitEnded(name, System.nanoTime() - start, outcome);
        }
    }

    /**
     * Parks until the waiter is told its round opened, something may have changed, {@code wakeAt} passes (if
     * {@code timed}), or the wait ends.
     *
     * @return "opened" or "timeout" when the wait ends with that outcome; null to read the latch again
     * @throws InterruptedException if interrupted
     * @throws IllegalStateException if the client closed
     */
    private String park(LatchWaits.Waiter waiter, long start, long waitNanos, boolean forever, long wakeAt,
            boolean timed) throws InterruptedException {
        while (true) {
            if (waiter.opened) {
                return "opened";
            }
            if (client.core.isClosed()) {
                throw client.core.closedException();
            }
            if (waiter.recheck) {
                return null;
            }
            long now = System.nanoTime();
            long left = forever ? Long.MAX_VALUE : waitNanos - (now - start);
            if (left <= 0) {
                return "timeout";
            }
            if (timed && now - wakeAt >= 0) {
                return null;
            }
            long parkNanos = timed ? Math.min(left, wakeAt - now) : left;
            if (parkNanos == Long.MAX_VALUE) {
                LockSupport.park(this);
            } else {
                LockSupport.parkNanos(this, parkNanos);
            }
            if (Thread.interrupted()) {
                throw new InterruptedException("interrupted while waiting for count-down latch '" + name + "'");
            }
        }
    }

    private long script(String... args) {
        client.core.ensureOpen();
        return client.calls().await(client.calls().<Long>run(LuaScript.LATCH, ScriptOutputType.INTEGER,
                new String[] {key}, args), args[0] + " of count-down latch '" + name + "'", null);
    }

    /** latch.lua 'wait' or 'info'. */
    private List<Object> read(String operation) {
        client.core.ensureOpen();
        String[] args = operation.equals("wait") ? new String[] {operation, client.core.clientId()}
                : new String[] {operation};
        return client.calls().await(client.calls().<List<Object>>run(LuaScript.LATCH, ScriptOutputType.MULTI,
                new String[] {key}, args), operation + " of count-down latch '" + name + "'", null);
    }

    @Override
    public String toString() {
        return "RelockCountDownLatch[" + name + "]";
    }
}
