package dev.relock.internal.single;

import dev.relock.internal.engine.LockKeys;

/**
 * Where one queued {@link Acquisition} is known in its client, so that what may let it in wakes it: the
 * {@link WaitingRoom} (wake-up and grant messages naming its owner), its lock's own channel on a Cluster with sharded
 * pub/sub (from its first failed attempt, {@link ShardWakeChannels}), and, for a writer, its client's line for the
 * lock ({@link LocalLines}: while it is in, nothing of it is in Redis, and a release of this client names it
 * successor).
 *
 * <p>Invariants. Each place is joined at most once at a time and left when the acquisition ends; the room is left
 * then unless the client is closing, whose close withdraws what it finds there. Guarded by the acquisition's lock.
 */
final class WakeRegistrations {

    private final SingleServerEngine engine;
    private final LockKeys keys;
    private final String owner;
    private final Acquisition waiter;
    private boolean inRoom;
    private boolean listening;
    private boolean inLine;

    WakeRegistrations(SingleServerEngine engine, LockKeys keys, String owner, Acquisition waiter) {
        this.engine = engine;
        this.keys = keys;
        this.owner = owner;
        this.waiter = waiter;
    }

    /** Enters the waiting room, where messages naming the owner find the acquisition. */
    void enterRoom() {
        engine.waitingRoom().enter(owner, waiter);
        inRoom = true;
    }

    /**
     * Joins the client's line for the lock if a write hold or a hand-over of this client leads it: then returns when
     * the acquisition should try in Redis itself if nobody named it successor by then; else null.
     */
    Long joinLine(long leaseNanos) {
        Long tryBy = engine.localLines().join(keys, waiter, leaseNanos);
        inLine = tryBy != null;
        return tryBy;
    }

    /** Whether it waits in the client's line. */
    boolean isInLine() {
        return inLine;
    }

    /** Leaves the client's line, if it is in: it tries in Redis now. */
    void leaveLine() {
        if (inLine) {
            engine.localLines().leave(keys, waiter);
            inLine = false;
        }
    }

    /** A release took it out of the line to name it successor: whether it was still in (and so is named). */
    boolean namedSuccessor() {
        boolean was = inLine;
        inLine = false;
        return was;
    }

    /** Goes back to the head of the line, if a thread of this client still leads it; returns whether it did. */
    boolean rejoinLine() {
        inLine = engine.localLines().rejoin(keys, waiter);
        return inLine;
    }

    /**
     * Listens to the lock's own channel from now on, after an attempt sent at {@code sentNanos} found the lock taken;
     * returns whether to try again at once: a release published before the channel was subscribed reached nobody.
     */
    boolean listen(long sentNanos) {
        if (listening) {
            return false;
        }
        listening = true;
        return engine.routes().listenForWakeUps(waiter, sentNanos);
    }

    /** The acquisition ended: leaves every place, the room unless {@code stayInRoom} (for the closing client). */
    void leave(boolean stayInRoom) {
        leaveLine();
        if (inRoom && !stayInRoom) {
            engine.waitingRoom().leave(owner, waiter);
        }
        if (listening) {
            engine.routes().stopListeningForWakeUps(waiter);
        }
    }

    @Override
    public String toString() {
        return "listening=" + listening + ", inLine=" + inLine;
    }
}
