package dev.relock.internal.single;

import dev.relock.internal.engine.Hold;
import dev.relock.internal.engine.HoldTable;
import dev.relock.internal.engine.LockKeys;
import dev.relock.internal.engine.Ticker;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

/**
 * The client's threads that wait for a write lock in the JVM, not in Redis, because another owner of the same client
 * holds it: one line per lock, first come first served. The holder's last release names the first of the line as its
 * successor (release.lua's ARGV[7]), and Redis makes the successor the holder in that same script when nobody waits in
 * its queue, so a hand-over between two threads of one client costs the release alone: no attempt of the successor,
 * no queue entry for it, no wake-up. Redis still decides every hand-over, with a new fencing token, and gives the lock
 * to a client waiting in its queue first; a successor it did not make the holder tries in Redis as any waiter does.
 *
 * <p>Invariants:
 * <ul>
 *   <li>An acquisition joins a line only before its first attempt, and only while the line is led: an owner of this
 *       client holds the lock (a write hold in the table, neither lost nor releasing) or a hand-over is in flight
 *       ({@code handing}: a last release that may name a successor from the line or grant the lock to a thread of
 *       this client waiting in Redis). Once it has tried in Redis it never joins again; a successor that Redis passed
 *       over for a thread of its own client goes back to the head of the line ({@link #rejoin}).
 *   <li>A line is never left with waiters and no leader for long: a hand-over that did not make its successor the
 *       holder, a hold that ended without naming one, and a hold reported lost wake the whole line
 *       ({@link #wakeIfUnled}), whose waiters then try in Redis. The one exception waits for Redis: after a release
 *       without a reply they are woken once Redis answers again ({@code Releases.wakeWaitersOnceReachable}).
 *       A waiter's own timer, at the holder's lease end as this client counted it when it joined, or at its deadline,
 *       bounds what is left: then it tries in Redis once, as any waiter does.
 *   <li>A joiner behind a hold is never missed by the end of that hold. It checks that the hold leads and enters the
 *       line in one section under the monitor of the hold's own {@link LockKeys} object. Every change that ends the
 *       hold's lead is a volatile write (releasing, lost, released) followed by a look at the line under that same
 *       monitor: a release marks the hold releasing inside it ({@link #beginHandOver}); a loss or a release nobody
 *       sees marks it outside, then wakes the line ({@link #wakeIfUnled}), which looks inside it. So either the
 *       joiner's section came first and the look finds it in the line, or the look's came first, after the mark,
 *       and the joiner saw the hold ended and did not join.
 *   <li>A line is in the map only while it has waiters or a hand-over counted in; the step that leaves it with
 *       neither takes it out ({@link #dropIfIdle}), under its monitor.
 *   <li>Lock order: an acquisition's lock, then the monitor of a hold's {@link LockKeys} (the handshake between a
 *       joiner and the hold's end; not the hold's own monitor, which {@code releaseLost} keeps while it waits for
 *       an executor), then a line's monitor. A releaser takes the keys' monitor (to mark the hold releasing and take
 *       the line) without any acquisition's lock, and names a successor after letting both monitors go. Waking a line
 *       never runs in another acquisition's step: it goes to the executor.
 * </ul>
 */
final class LocalLines {

    /** The waiters for one lock. */
    static final class Line {
        // all guarded by this
        private final ArrayDeque<Acquisition> waiting = new ArrayDeque<>();
        // hand-overs in flight: last releases of a write hold of this client that may name a successor from this line
        // or grant the lock to a thread of this client waiting in Redis (LocalLines.beginHandOver)
        private int handing;
        // out of the map: a joiner that finds it so looks the line up again
        private boolean removed;
    }

    private final ConcurrentHashMap<LockKeys, Line> lines = new ConcurrentHashMap<>();
    private final HoldTable holds;
    private final Executor executor;
    // the client's clock, which a waiter's "try in Redis by" time is read on
    private final Ticker ticker;

    LocalLines(HoldTable holds, Executor executor, Ticker ticker) {
        this.holds = holds;
        this.executor = executor;
        this.ticker = ticker;
    }

    /**
     * Puts {@code waiter} at the end of its lock's line if the line is led; returns null if it did not, else when
     * (by the client's ticker) the waiter should try in Redis itself if nobody named it by then: when the holder's lease
     * ends as this client counts it (renewals move it on, and the waiter then tries once more than it needed), or
     * after {@code leaseNanos} when a hand-over leads the line. The waiter's lock held.
     */
    Long join(LockKeys keys, Acquisition waiter, long leaseNanos) {
        Long tryBy = joinHolder(keys, waiter, false);
        if (tryBy != null) {
            return tryBy;
        }
        Line line = lines.get(keys);
        if (line == null) {
            return null;
        }
        synchronized (line) {
            if (line.removed || line.handing == 0) {
                return null;
            }
            line.waiting.add(waiter);
            return ticker.nanoTime() + leaseNanos;
        }
    }

    /**
     * Puts {@code waiter} in the line of a write hold of this client that is neither releasing nor lost, at its head
     * ({@code first}) or end; returns the holder's lease end, or null when there is no such hold.
     */
    private Long joinHolder(LockKeys keys, Acquisition waiter, boolean first) {
        Hold holder = holds.liveWriter(keys);
        if (holder == null) {
            return null;
        }
        // the holder's release marks it releasing under this monitor before it looks for a successor, so the
        // waiter is either seen there or sees the mark
        synchronized (holder.keys) {
            if (!HoldTable.isLiveWriter(holder)) {
                return null;
            }
            while (true) {
                Line line = lines.computeIfAbsent(keys, k -> new Line());
                synchronized (line) {
                    if (!line.removed) {
                        if (first) {
                            line.waiting.addFirst(waiter);
                        } else {
                            line.waiting.add(waiter);
                        }
                        return holder.leaseEndNanos();
                    }
                }
            }
        }
    }

    /** Takes {@code waiter} out of its line, if it is still there. The waiter's lock held. */
    void leave(LockKeys keys, Acquisition waiter) {
        Line line = lines.get(keys);
        if (line != null) {
            synchronized (line) {
                if (line.waiting.remove(waiter)) {
                    dropIfIdle(keys, line);
                }
            }
        }
    }

    /**
     * The last hold of {@code holder} (a write hold) is about to be released: marks it releasing and, if its release
     * hands over ({@code handsOver}: it may name a successor and take grants in its reply), returns the lock's line
     * with a hand-over counted in, for {@link #nameSuccessor}; null when nobody of this client waits, in the line or
     * in Redis ({@code waitsInRedis}). Until the hand-over is over ({@link #handedOver}) the line stays led, so a
     * thread that asks for the lock meanwhile (the releasing one, say) joins it instead of the queue in Redis. No
     * acquisition's lock held.
     */
    Line beginHandOver(Hold holder, boolean handsOver, BooleanSupplier waitsInRedis) {
        synchronized (holder.keys) {
            holder.beginRelease();
            if (!handsOver) {
                return null;
            }
            while (true) {
                Line line = lines.get(holder.keys);
                if (line == null) {
                    if (!waitsInRedis.getAsBoolean()) {
                        return null;
                    }
                    line = lines.computeIfAbsent(holder.keys, k -> new Line());
                }
                synchronized (line) {
                    if (line.removed) {
                        continue;
                    }
                    if (line.waiting.isEmpty() && line.handing == 0 && !waitsInRedis.getAsBoolean()) {
                        // the line made just above, for a waiter in Redis that has left since
                        dropIfIdle(holder.keys, line);
                        return null;
                    }
                    line.handing++;
                    return line;
                }
            }
        }
    }

    /** The successor a release named, and that release's reply. */
    record Succession(Acquisition successor, long attempt, CompletableFuture<Object> sent) {
    }

    /**
     * Names the first waiter of {@code line} still waiting as the successor in the release that {@code release} sends
     * (given the successor's arguments: owner, lease, hand-over id), sent under that waiter's lock so that its
     * withdraw, if it gives up, goes after it. Null when none was still waiting: then nothing was sent. Not on an I/O
     * thread; no acquisition's lock held.
     */
    Succession nameSuccessor(Line line, Function<String[], CompletableFuture<Object>> release) {
        while (true) {
            Acquisition next;
            synchronized (line) {
                next = line.waiting.poll();
                if (next == null) {
                    return null;
                }
            }
            Succession named = next.succeed(release);
            if (named != null) {
                return named;
            }
        }
    }

    /**
     * Puts a successor that Redis did not make the holder back at the head of the line, which it left when it was
     * named, if the line is still led (the release granted the lock to a thread of this client that waited in Redis:
     * that thread's hold, or the hand-over until it has it); returns whether it did. The successor's lock held.
     */
    boolean rejoin(LockKeys keys, Acquisition successor) {
        Line line = lines.get(keys);
        if (line != null) {
            synchronized (line) {
                if (!line.removed && line.handing > 0) {
                    line.waiting.addFirst(successor);
                    return true;
                }
            }
        }
        return joinHolder(keys, successor, true) != null;
    }

    /**
     * A hand-over counted in by {@link #beginHandOver} is over: its successor took the hold (then it leads), or not.
     * Wakes the line if it is no longer led, unless {@code waitForRedis}. Any thread; the successor's lock may be held.
     */
    void handedOver(LockKeys keys, Line line, boolean waitForRedis) {
        synchronized (line) {
            line.handing--;
            dropIfIdle(keys, line);
        }
        if (!waitForRedis) {
            wakeIfUnled(keys);
        }
    }

    /**
     * A write hold of this client ended without naming a successor (lost, released unseen, with a delay, or refused),
     * or a hand-over ended: the waiters of its line try in Redis unless another hold or hand-over leads it.
     * {@code keys} is the ended hold's own object, whose monitor its joiners took (see the class notes). Any thread;
     * no line's monitor held.
     */
    void wakeIfUnled(LockKeys keys) {
        List<Acquisition> woken;
        synchronized (keys) {
            Line line = lines.get(keys);
            if (line == null) {
                return;
            }
            synchronized (line) {
                if (line.removed || line.handing > 0 || line.waiting.isEmpty() || led(keys)) {
                    return;
                }
                woken = List.copyOf(line.waiting);
                line.waiting.clear();
                dropIfIdle(keys, line);
            }
        }
        // never in the step of the caller (a successor's), whose lock is held: each wake is a step of its own
        try {
            executor.execute(() -> woken.forEach(Acquisition::wake));
        } catch (RejectedExecutionException e) {
            // the executor shuts down only with the client, which ends every waiter
        }
    }

    /** How many lines are in the map: locks with a waiter here or a hand-over in flight. */
    int size() {
        return lines.size();
    }

    /** The lock's line, or null when nobody waits in it and no hand-over is in flight. */
    Line line(LockKeys keys) {
        return lines.get(keys);
    }

    private boolean led(LockKeys keys) {
        return holds.liveWriter(keys) != null;
    }

    /** Line's monitor held. */
    private void dropIfIdle(LockKeys keys, Line line) {
        if (line.waiting.isEmpty() && line.handing == 0) {
            line.removed = true;
            lines.remove(keys, line);
        }
    }
}
