package dev.relock.internal.engine;

import dev.relock.HeldLock;
import dev.relock.LeaseState;
import java.time.Duration;
import java.time.Instant;
import java.util.AbstractCollection;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Every hold of one client that is not yet given up, by lock keys, mode and owner. The owner threads add
 * and remove their holds; the lease keeper walks the table to renew them. Thread-safe.
 *
 * <p>Footprint: one map entry per lock, keyed by the holds' {@link LockKeys} (the object the lock
 * view keeps anyway), so a lookup allocates nothing and an entry costs only the map's node. Its
 * value is the one {@link Hold}, or a {@code Hold[]} while several owners or modes hold the lock
 * (readers in several threads, a writer that downgraded). An array is never written after it is
 * in the map: a change puts a new one, inside the map's atomic compute for that key.
 *
 * <p>Public because both engines and the lease keeper, each in a package of its own, read it.
 */
public final class HoldTable {

    private final ConcurrentHashMap<LockKeys, Object> holds = new ConcurrentHashMap<>();
    // the client's clock: when a hold joined, and how much of its lease is left
    private final Ticker ticker;

    /** A table whose holds are timed by {@code ticker}, the client's. */
    public HoldTable(Ticker ticker) {
        this.ticker = ticker;
    }

    public Hold get(LockKeys keys, LockMode mode, String owner) {
        Object held = holds.get(keys);
        if (held instanceof Hold hold) {
            return hold.mode == mode && hold.owner.equals(owner) ? hold : null;
        }
        if (held != null) {
            for (Hold hold : (Hold[]) held) {
                if (hold.mode == mode && hold.owner.equals(owner)) {
                    return hold;
                }
            }
        }
        return null;
    }

    /**
     * A write hold of the lock, whatever its owner, that is still held and not being released; null when none. (Two
     * can be in the table at once: the one being released, and the next owner's, granted in the release.)
     */
    public Hold liveWriter(LockKeys keys) {
        Object held = holds.get(keys);
        if (held instanceof Hold hold) {
            return isLiveWriter(hold) ? hold : null;
        }
        if (held != null) {
            for (Hold hold : (Hold[]) held) {
                if (isLiveWriter(hold)) {
                    return hold;
                }
            }
        }
        return null;
    }

    /** Whether {@code hold} is a write hold still held and not being released. */
    public static boolean isLiveWriter(Hold hold) {
        return hold.mode == LockMode.WRITE && !hold.releasing() && hold.state() == LeaseState.HELD;
    }

    /**
     * Adds the hold, in place of any other of the same lock, mode and owner; it is held since now. Once per hold,
     * by the thread that acquired it.
     */
    public void add(Hold hold) {
        hold.joinedTable(ticker.nanoTime());
        if (holds.putIfAbsent(hold.keys, hold) != null) {
            holds.compute(hold.keys, (keys, held) -> with(held, hold));
        }
    }

    /** Removes this very hold (not another of the same lock, mode and owner). */
    public void remove(Hold hold) {
        // Hold keeps Object's equals: the two-argument remove compares identity
        if (!holds.remove(hold.keys, hold)) {
            holds.computeIfPresent(hold.keys, (keys, held) -> without(held, hold));
        }
    }

    private static Object with(Object held, Hold hold) {
        Hold[] group = held == null ? new Hold[0] : held instanceof Hold one ? new Hold[] {one} : (Hold[]) held;
        for (int i = 0; i < group.length; i++) {
            if (group[i].mode == hold.mode && group[i].owner.equals(hold.owner)) {
                if (group.length == 1) {
                    return hold;
                }
                Hold[] replaced = group.clone();
                replaced[i] = hold;
                return replaced;
            }
        }
        if (group.length == 0) {
            return hold;
        }
        Hold[] grown = Arrays.copyOf(group, group.length + 1);
        grown[group.length] = hold;
        return grown;
    }

    private static Object without(Object held, Hold hold) {
        if (held == hold) {
            return null; // the group shrank to this hold between the two steps of remove()
        }
        if (!(held instanceof Hold[] group)) {
            return held; // another hold of the same lock, mode and owner took its place
        }
        int at = Arrays.asList(group).indexOf(hold); // identity, as above
        if (at < 0) {
            return held;
        }
        if (group.length == 2) {
            return group[1 - at];
        }
        Hold[] shrunk = new Hold[group.length - 1];
        System.arraycopy(group, 0, shrunk, 0, at);
        System.arraycopy(group, at + 1, shrunk, at, group.length - at - 1);
        return shrunk;
    }

    /** A live view of the holds; iterating it is weakly consistent, as the map's own views are. */
    public Collection<Hold> all() {
        return new AbstractCollection<>() {
            @Override
            public Iterator<Hold> iterator() {
                return new Holds(holds.values().iterator());
            }

            @Override
            public int size() {
                return HoldTable.this.size();
            }
        };
    }

    public int size() {
        int size = 0;
        for (Object held : holds.values()) {
            size += held instanceof Hold[] group ? group.length : 1;
        }
        return size;
    }

    /**
     * The holds still held (not lost), by name, kind and owner: {@code RelockClient.heldLocks()}. One writer per lock:
     * during a hand-over between two owners of this client the table has both the releasing hold and its successor's,
     * and the view shows the successor, the holder Redis knows (see {@link #superseded}). Each lock's holds are judged
     * from one read of its entry, so the view sees a hand-over before or after that entry changed, never half of it.
     */
    public List<HeldLock> heldLocks() {
        long now = ticker.nanoTime();
        List<HeldLock> held = new ArrayList<>();
        for (Object entry : holds.values()) {
            Hold[] group = entry instanceof Hold one ? new Hold[] {one} : (Hold[]) entry;
            for (Hold hold : group) {
                if (hold.state() == LeaseState.HELD && !superseded(hold, group)) {
                    held.add(viewOf(hold, now));
                }
            }
        }
        held.sort(Comparator.comparing(HeldLock::name).thenComparing(HeldLock::kind).thenComparing(HeldLock::owner));
        return held;
    }

    private static HeldLock viewOf(Hold hold, long now) {
        long leftMillis = TimeUnit.NANOSECONDS.toMillis(Math.max(0, hold.leaseEndNanos() - now));
        return new HeldLock(hold.lockName, LockEvents.kindOf(hold.mode), hold.owner, hold.fencingToken,
                Instant.ofEpochMilli(hold.heldSinceMillis(now)), Duration.ofMillis(leftMillis), hold.renewed(),
                hold.threadName());
    }

    /**
     * Whether {@code hold}, one of {@code group} (the holds of one lock), is a write hold with a newer write hold in
     * the group, still held. Redis gives every fresh write hold a higher fencing token than the last, so the newer one
     * is the holder Redis knows: the release that ended the older one made it the holder in the same script (a
     * hand-over), or the older one's lease ran out in Redis before this client counted it lost. The older one stays
     * in the table only until its owner's thread has read the release's reply, or the lease keeper reports it lost.
     */
    private static boolean superseded(Hold hold, Hold[] group) {
        if (hold.mode != LockMode.WRITE) {
            return false;
        }
        for (Hold other : group) {
            if (other.mode == LockMode.WRITE && other.fencingToken > hold.fencingToken
                    && other.state() == LeaseState.HELD) {
                return true;
            }
        }
        return false;
    }

    /** The holds of the map's values, each value being one Hold or a Hold[]. */
    private static final class Holds implements Iterator<Hold> {

        private static final Hold[] NONE = {};

        private final Iterator<Object> values;
        private Hold[] group = NONE;
        private int next;
        private Hold single;

        Holds(Iterator<Object> values) {
            this.values = values;
        }

        @Override
        public boolean hasNext() {
            while (single == null && next == group.length) {
                if (!values.hasNext()) {
                    return false;
                }
                Object held = values.next();
                if (held instanceof Hold hold) {
                    single = hold;
                } else {
                    group = (Hold[]) held;
                    next = 0;
                }
            }
            return true;
        }

        @Override
        public Hold next() {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            if (single != null) {
                Hold hold = single;
                single = null;
                return hold;
            }
            return group[next++];
        }
    }
}
