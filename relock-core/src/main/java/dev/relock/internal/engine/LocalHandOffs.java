package dev.relock.internal.engine;

import dev.relock.LeaseState;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Local hand-off: threads of one client that wait for a write lock another of its threads (or handles) holds wait
 * here, in the JVM, in arrival order, instead of each in Redis; when the holder gives up its last hold, the lock passes
 * to the first of them without a round trip, unless someone waits for it in Redis. Only where the engine offers it
 * ({@link Engine#handsOffLocally()}: one Redis, not Redlock).
 *
 * <p>What Redis sees. A hold handed on keeps the Redis owner, the lease and the renewal of the hold it came from: Redis
 * holds the lock for this client, under the owner id of whoever took it from Redis (the chain's owner), until the last
 * local holder releases it through Redis. Here the new hold names its thread ({@link Holder}), so only that thread
 * unlocks, re-enters or downgrades it; the lease keeper renews it like any hold.
 *
 * <p>Owner ids. Only a hold taken in a turn (below) is handed on: a turn acquires under an owner id of its own
 * ({@code <client id>:h<n>}), which no thread uses as its own id. A thread's own id never becomes the Redis owner of
 * a hold another thread holds, so nothing a thread later sends under its id (an acquisition, a read that would pass
 * for a downgrade, a multi-lock and its undo, a release) can touch a hold handed on. A hold first taken under a
 * thread's own id goes back to Redis when its thread gives it up, and the first thread waiting here takes its turn.
 *
 * <p>When it is handed on (all under the lock's gate, see below): the hold was taken in a turn or handed on, is held,
 * renewed (not an explicit lease), not given up after a delay, the first waiter here asked for a renewed lease too, at
 * least half its lease is left, its owner holds no read lock of the name (a downgrade: the next writer would write
 * while it reads), nobody is known to wait for the lock in Redis, and the chain is younger than {@link #SLICE_NANOS}.
 * Otherwise the release goes to Redis as always (the head of Redis's queue gets the lock; the first waiter here then
 * takes its turn with an acquisition of its own in Redis, and the others wait here behind it). A hold found lost gives
 * the first waiter here its turn at once, as Redis would have given it the lock once the lease ran out.
 *
 * <p>Fairness across clients. Someone waiting in Redis (another client, or a handle of this one) is known here from a
 * {@code 'C'} message that acquire.lua sends the holder's client when it queues behind it, or from the acquisition's
 * reply when others were queued already; from then on the chain's next release goes through Redis. A message can be
 * lost (a reconnect, or sharded pub/sub on a Cluster, where the holder's client does not listen to the lock's channel
 * while it holds): then the slice bounds the wait, as a chain goes through Redis at least every
 * {@link #SLICE_NANOS}.
 *
 * <p>Fencing. A turn's acquisition reserves up to {@link #TOKENS_PER_CHAIN} tokens after its own (acquire.lua sets the
 * lock's fence that far ahead, but never more than that many microseconds ahead of the server's clock), and each hold
 * handed on gets the previous one's token plus one, at most as many as were reserved and at most one per
 * {@link #NANOS_PER_TOKEN} ns since the turn took the lock. So tokens rise with every holder, local or
 * not, and every later holder from Redis gets a larger one than any of the chain's, also when Redis let it in after
 * losing the chain's lock (lease run out, forced unlock) while the chain went on here. Only when Redis lost its fence
 * key too (restart without persistence, failover, FLUSHALL) does the next token come from Redis's clock alone: the
 * chain's tokens are at most 1 ms of that clock ahead of its first, and rise at most half as fast as the clock, so
 * a holder let in then gets a larger token unless the lock was lost within the chain's first millisecond. A turn whose
 * hold Redis granted on release (no tokens reserved) does not hand it on.
 *
 * <p>Threads and state. One gate per lock key, in {@link #gates}; every change of a gate, and every decision that
 * reads one, runs inside {@code gates.compute} for its key, which serializes them; threads are unparked after it.
 * A gate exists while threads wait in it, while one of its threads takes its turn in Redis, while the chain's release
 * to Redis is under way, while a hold taken in a turn or handed on is held (so a hand-off always finds its chain's
 * start, first token and reservation), or while someone is known to wait in Redis for the hold it tracks.
 *
 * <p>Public because the single-server engine, in a package of its own, releases through it.
 */
public final class LocalHandOffs {

    /**
     * The longest a chain of local hand-offs runs before its holder's release goes through Redis again: how long a
     * lost 'C' message can keep another client waiting for more than the holds under way. A hold kept longer than this
     * is not handed on (its release costs little next to it).
     */
    static final long SLICE_NANOS = TimeUnit.SECONDS.toNanos(1);
    /**
     * The fencing tokens a turn asks to reserve after its own (acquire.lua's ARGV[8], which reserves fewer when the
     * fence is ahead of the server's clock): a chain hands on at most as many as it got.
     */
    static final long TOKENS_PER_CHAIN = 1_000;
    /** A chain hands on at most one token per this many ns since it took the lock from Redis. */
    static final long NANOS_PER_TOKEN = 2_000;

    /** How the engine makes a hold handed on count: in the hold table and with the lease keeper. */
    public interface Tracker {
        void track(Hold hold);
    }

    /** A thread waiting here; its state is changed inside the gate's compute, read by the thread. */
    static final class Waiter {
        static final int WAITING = 0;
        static final int GRANTED = 1; // holds {@link #granted}
        static final int TURN = 2; // goes to Redis for the lock, the others wait behind it
        static final int CLOSED = 3; // the client closed

        final Thread thread;
        final Holder holder;
        final boolean renewed;
        volatile int state = WAITING;
        volatile Hold granted;

        Waiter(Thread thread, Holder holder, boolean renewed) {
            this.thread = thread;
            this.holder = holder;
            this.renewed = renewed;
        }
    }

    /** A lock key's waiting threads and chain; changed only inside {@code gates.compute} for its key. */
    private static final class Gate {
        final ArrayDeque<Waiter> waiting = new ArrayDeque<>(4);
        // the write hold of this client the waiters wait for; null while it is being released, or a turn is under way
        Hold held;
        // whether held came from a local hand-off (then the gate stays while it is held)
        boolean handedOn;
        // whether held may be handed on: taken in a turn, under an owner id of its own that no thread uses as its own
        // (see class comment), or handed on itself
        boolean chain;
        // when the chain of held took the lock from Redis, System.nanoTime(), and the token Redis gave it then
        long startNanos;
        long firstToken;
        // the tokens after firstToken reserved for the chain
        long reserved;
        // the hold whose release to Redis is under way, or null
        Hold releasing;
        // the waiter whose turn in Redis is under way, or null
        Waiter turn;
        // the Redis owner that someone waits for in Redis, or null
        String contendedOwner;

        /**
         * From now on the gate waits for {@code hold}: taken in a turn with {@code tokensReserved} (0: not handed on),
         * or {@code handed} on within the chain it tracks.
         */
        void track(Hold hold, long tokensReserved, boolean handed) {
            held = hold;
            handedOn = handed;
            if (!handed) {
                chain = tokensReserved > 0;
                reserved = tokensReserved;
                startNanos = hold.heldSinceNanos;
                firstToken = hold.fencingToken;
            }
        }

        /**
         * Forgets {@link #held} if it was given up without going through this gate (a hold nobody saw, released at
         * once); returns whether nothing is held now. (A lost hold is forgotten by {@link #lost} when it is found lost.)
         */
        boolean dropReleased() {
            if (held != null && held.state() == LeaseState.RELEASED) {
                if (held.owner.equals(contendedOwner)) {
                    contendedOwner = null;
                }
                held = null;
                handedOn = false;
                chain = false;
            }
            return held == null;
        }

        boolean idle() {
            return waiting.isEmpty() && turn == null && releasing == null && contendedOwner == null
                    && (held == null || !(chain || handedOn));
        }

        /** Gives the first waiter its turn in Redis, unless a turn is under way; returns it to unpark, or null. */
        Waiter nextTurn() {
            if (turn != null || releasing != null || held != null) {
                return null;
            }
            Waiter next = waiting.pollFirst();
            if (next != null) {
                next.state = Waiter.TURN;
                turn = next;
            }
            return next;
        }
    }

    private final EngineClient client;
    private final ConcurrentHashMap<String, Gate> gates = new ConcurrentHashMap<>();

    LocalHandOffs(EngineClient client) {
        this.client = client;
    }

    /**
     * A thread that holds no write lock of {@code keys} asks for it: it waits here if another of this client's write
     * holds of the lock is held (not being released) or threads wait here already.
     *
     * @param tryOnly whether it will not wait: then it is not queued
     * @return the waiter to wait as; {@link #BUSY} for a {@code tryOnly} that would have waited; null to acquire in
     *     Redis as usual
     */
    Waiter arrive(LockKeys keys, Holder holder, boolean renewed, boolean tryOnly) {
        Waiter[] queued = new Waiter[1];
        Waiter[] turned = new Waiter[1];
        gates.compute(keys.lock(), (key, gate) -> {
            if (client.isClosed()) {
                return gate;
            }
            if (gate == null) {
                Hold held = client.holds().writeHold(keys);
                if (held == null || held.state() != LeaseState.HELD || held.releasing()) {
                    return null;
                }
                if (tryOnly) {
                    queued[0] = BUSY;
                    return null;
                }
                gate = new Gate();
                gate.track(held, 0, false);
            } else if (gate.dropReleased() && gate.turn == null && gate.releasing == null) {
                // its hold ended without this gate hearing of it: nothing to wait for here
                Waiter stuck = gate.nextTurn();
                if (stuck == null) {
                    return gate.idle() ? null : gate;
                }
                turned[0] = stuck;
            }
            if (tryOnly) {
                queued[0] = BUSY;
                return gate;
            }
            Waiter waiter = new Waiter(Thread.currentThread(), holder, renewed);
            gate.waiting.addLast(waiter);
            queued[0] = waiter;
            return gate;
        });
        unpark(turned[0]);
        return queued[0];
    }

    static final Waiter BUSY = new Waiter(null, null, false);

    /**
     * A waiter gives up (its wait ended or it was interrupted) unless something came first: then it keeps that.
     *
     * @return {@link Waiter#WAITING} if it left the queue, else the state it got meanwhile
     */
    int leave(LockKeys keys, Waiter waiter) {
        int[] state = {-1};
        gates.computeIfPresent(keys.lock(), (key, gate) -> {
            state[0] = waiter.state;
            if (state[0] == Waiter.WAITING) {
                gate.waiting.remove(waiter);
            }
            return gate.idle() ? null : gate;
        });
        // a waiter still queued keeps its gate; without one, it was granted, given its turn or closed before
        return state[0] == -1 ? waiter.state : state[0];
    }

    /**
     * A safety net, from a waiter that woke after a while: if the gate's hold ended without the gate hearing of it,
     * the first waiter takes its turn.
     */
    void recheck(LockKeys keys) {
        Waiter[] next = new Waiter[1];
        gates.computeIfPresent(keys.lock(), (key, gate) -> {
            if (gate.dropReleased() && gate.turn == null && gate.releasing == null) {
                next[0] = gate.nextTurn();
            }
            return gate.idle() ? null : gate;
        });
        unpark(next[0]);
    }

    /** A waiter's turn in Redis ended: with the hold it took, or none (the next waiter takes its turn then). */
    void turnEnded(LockKeys keys, Waiter waiter, Hold taken, long tokensReserved) {
        Waiter[] next = new Waiter[1];
        gates.computeIfPresent(keys.lock(), (key, gate) -> {
            if (gate.turn == waiter) {
                gate.turn = null;
            }
            if (taken != null && taken.state() == LeaseState.HELD) {
                // a hold Redis granted (no tokens reserved) goes back to Redis when given up
                gate.track(taken, tokensReserved, false);
            } else {
                next[0] = gate.nextTurn();
            }
            return gate.idle() ? null : gate;
        });
        unpark(next[0]);
    }

    /**
     * The last hold of {@code hold}, a write hold, is being given up: hands it on to the first waiter here if it may
     * (see the class comment), else marks it as being released to Redis.
     *
     * @param mayHandOn false where the release must go to Redis whatever waits here (a release after a delay)
     * @return whether it was handed on: then nothing of it goes to Redis, and it is released here (the caller tells
     *     nobody more); if not, the caller releases it in Redis and then calls {@link #released}
     */
    public boolean handOnOrRelease(Hold hold, boolean mayHandOn, Tracker tracker) {
        Waiter[] granted = new Waiter[1];
        gates.compute(hold.keys.lock(), (key, gate) -> {
            if (gate == null || gate.held != hold) {
                // not a chain anyone waits for here; an arrival from now on goes to Redis (and queues there)
                hold.beginRelease();
                return gate;
            }
            Waiter first = gate.waiting.peekFirst();
            Hold next = mayHandOn && first != null && first.renewed ? handOn(hold, gate, first.holder) : null;
            if (next != null) {
                tracker.track(next);
                gate.waiting.pollFirst();
                gate.track(next, 0, true);
                first.granted = next;
                first.state = Waiter.GRANTED;
                granted[0] = first;
                return gate;
            }
            hold.beginRelease();
            gate.held = null;
            gate.releasing = hold;
            return gate;
        });
        if (granted[0] == null) {
            return false;
        }
        hold.handedOnEnded();
        unpark(granted[0]);
        return true;
    }

    /** The new hold for {@code to} if {@code hold} may be handed on now, else null. Inside the gate's compute. */
    private Hold handOn(Hold hold, Gate gate, Holder to) {
        long now = System.nanoTime();
        long handedOn = hold.fencingToken + 1 - gate.firstToken;
        if (!gate.chain || client.isClosed() || !hold.renewed() || hold.owner.equals(gate.contendedOwner)
                || now - gate.startNanos >= SLICE_NANOS || handedOn > gate.reserved
                || handedOn * NANOS_PER_TOKEN > now - gate.startNanos
                || client.holds().ofOwner(hold.keys, LockMode.READ, hold.owner) != null) {
            return null;
        }
        return hold.handOn(to, hold.fencingToken + 1, now, TimeUnit.MILLISECONDS.toNanos(hold.leaseMillis()) / 2);
    }

    /**
     * The release of {@code hold} that {@link #handOnOrRelease} did not hand on has been sent to Redis (and answered, or
     * given up on), or the hold was lost and its owner's release of it sent: the first waiter here takes its turn.
     */
    public void released(Hold hold) {
        Waiter[] next = new Waiter[1];
        gates.computeIfPresent(hold.keys.lock(), (key, gate) -> {
            if (gate.releasing == hold || gate.held == hold) {
                gate.releasing = null;
                gate.held = null;
                gate.contendedOwner = null;
                next[0] = gate.nextTurn();
            } else if (hold.owner.equals(gate.contendedOwner)) {
                // a hold the gate does not track (taken in Redis while the gate's own turn was under way)
                gate.contendedOwner = null;
            }
            return gate.idle() ? null : gate;
        });
        unpark(next[0]);
    }

    /**
     * Someone waits in Redis for the write lock at {@code lockKey} that {@code owner} holds: a {@code 'C'} message, or an
     * acquisition that found others queued. If a hold of this client is that, its chain's next release goes to Redis.
     * Any thread, Lettuce's I/O threads included: never blocks.
     */
    public void othersWait(String lockKey, String owner) {
        String prefix = client.settings().keyPrefix();
        String name = LockKeys.nameOf(prefix, lockKey);
        if (name == null) {
            return; // not a lock of this client's prefix
        }
        LockKeys keys = LockKeys.of(prefix, name);
        gates.compute(lockKey, (key, gate) -> {
            // only for a hold that is still this client's: a late message leaves nothing behind
            Hold held = client.holds().ofOwner(keys, LockMode.WRITE, owner);
            if (held == null || held.state() != LeaseState.HELD || held.releasing()) {
                return gate;
            }
            if (gate == null) {
                gate = new Gate();
                gate.track(held, 0, false);
            }
            gate.contendedOwner = owner;
            return gate;
        });
    }

    /**
     * {@code hold} was found lost: the first thread waiting for it here takes its turn in Redis now, as it would have
     * got the lock there once its lease ran out. Safe under the turn's own owner id: the lost hold's owner releases it
     * by its own id when it unlocks. Any thread.
     */
    public void lost(Hold hold) {
        if (hold.mode != LockMode.WRITE) {
            return;
        }
        Waiter[] next = new Waiter[1];
        gates.computeIfPresent(hold.keys.lock(), (key, gate) -> {
            if (gate.held == hold) {
                gate.held = null;
                gate.handedOn = false;
                gate.chain = false;
                if (hold.owner.equals(gate.contendedOwner)) {
                    gate.contendedOwner = null;
                }
                next[0] = gate.nextTurn();
            }
            return gate.idle() ? null : gate;
        });
        unpark(next[0]);
    }

    /** The client closes: every waiter here fails. */
    void close() {
        List<Waiter> woken = new ArrayList<>();
        for (String key : gates.keySet()) {
            gates.computeIfPresent(key, (k, gate) -> {
                for (Waiter waiter : gate.waiting) {
                    waiter.state = Waiter.CLOSED;
                    woken.add(waiter);
                }
                gate.waiting.clear();
                return gate.idle() ? null : gate;
            });
        }
        woken.forEach(LocalHandOffs::unpark);
    }

    /** Whether this client knows that someone waits in Redis for its hold of the lock at {@code lockKey}; for tests. */
    public boolean othersKnownToWait(String lockKey) {
        boolean[] known = new boolean[1];
        gates.computeIfPresent(lockKey, (key, gate) -> {
            known[0] = gate.contendedOwner != null && gate.held != null
                    && gate.contendedOwner.equals(gate.held.owner);
            return gate;
        });
        return known[0];
    }

    /** How many threads wait here for the lock at {@code lockKey} now (not counting one taking its turn); for tests. */
    public int waiters(String lockKey) {
        int[] waiters = new int[1];
        gates.computeIfPresent(lockKey, (key, gate) -> {
            waiters[0] = gate.waiting.size();
            return gate;
        });
        return waiters[0];
    }

    /** Whether threads wait here for the lock at {@code lockKey} now; for tests. */
    public boolean waiting(String lockKey) {
        boolean[] waiting = new boolean[1];
        gates.computeIfPresent(lockKey, (key, gate) -> {
            waiting[0] = !gate.waiting.isEmpty();
            return gate;
        });
        return waiting[0];
    }

    private static void unpark(Waiter waiter) {
        if (waiter != null) {
            LockSupport.unpark(waiter.thread);
        }
    }
}
