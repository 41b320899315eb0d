package dev.relock;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Records what holders of locks did, in this JVM and in others, and counts where mutual exclusion broke and whether
 * fencing tokens exposed it.
 *
 * <p>Three kinds of event, each with a lock name, an owner, the owner's fencing token and a {@link System#nanoTime()}
 * stamp: {@code ENTER} (the owner believes it holds the lock and starts its critical section), {@code WRITE} (it
 * writes to the protected resource with its token) and {@code LEAVE}. Stamps from other JVMs on the same host are
 * comparable: on Linux {@code nanoTime} reads the system-wide {@code CLOCK_MONOTONIC}. Child JVMs print events as
 * {@link #line} text and the test feeds the lines it reads to {@link #add(String)}.
 *
 * <p>{@link #report()} replays all events in stamp order and counts, per lock:
 * <ul>
 *   <li>overlaps: an {@code ENTER} while another owner is inside (mutual exclusion broken);</li>
 *   <li>token regressions: an {@code ENTER} whose token is lower than an earlier entry's, or equal to it but by
 *       another owner (fencing broken). The same owner may enter again with its token when its hold never ended in
 *       Redis in between (a release that failed while Redis was down, then a re-entry);</li>
 *   <li>writes a fenced resource (one that keeps the highest token it has seen and refuses lower ones, like {@code
 *       UPDATE ... WHERE last_token <= ?}) accepts and refuses. A refused write is an overlap that fencing caught.</li>
 * </ul>
 * Thread-safe: all methods synchronize on this checker.
 */
final class ExclusionChecker {

    enum Kind { ENTER, WRITE, LEAVE }

    /** One thing an owner did; {@code nanos} is {@link System#nanoTime()} where it happened. */
    record Event(Kind kind, String lock, String owner, long token, long nanos) {
    }

    /**
     * What the replay found. Mutual exclusion held if {@code overlaps} is 0; fencing exposed every overlap if
     * {@code tokenRegressions} is 0 (then every stale write was refused).
     */
    record Report(int entries, int overlaps, int tokenRegressions, int writesAccepted, int writesRefused,
            List<String> violations) {
    }

    private static final String PREFIX = "EXCL ";

    private final List<Event> events = new ArrayList<>();

    /** Records that {@code owner} entered its critical section on {@code lock}, now. */
    synchronized void enter(String lock, String owner, long token) {
        events.add(new Event(Kind.ENTER, lock, owner, token, System.nanoTime()));
    }

    /**
     * Records a write to the protected resource, now, and answers as a fenced resource would at this moment: true if
     * {@code token} is not lower than the highest token written so far for {@code lock}.
     */
    synchronized boolean write(String lock, String owner, long token) {
        events.add(new Event(Kind.WRITE, lock, owner, token, System.nanoTime()));
        long highest = Long.MIN_VALUE;
        for (Event e : events) {
            if (e.kind() == Kind.WRITE && e.lock().equals(lock) && e.token() > highest) {
                highest = e.token();
            }
        }
        return token >= highest;
    }

    /** Records that {@code owner} left its critical section on {@code lock}, now. */
    synchronized void leave(String lock, String owner, long token) {
        events.add(new Event(Kind.LEAVE, lock, owner, token, System.nanoTime()));
    }

    /** Records an event that happened elsewhere (another JVM, or a time the test knows better than now). */
    synchronized void add(Event event) {
        events.add(event);
    }

    /**
     * Records an event printed by {@link #line}; other lines are ignored.
     *
     * @return true if {@code text} was an event
     */
    boolean add(String text) {
        if (!text.startsWith(PREFIX)) {
            return false;
        }
        String[] parts = text.substring(PREFIX.length()).trim().split(" ");
        if (parts.length != 5) {
            throw new IllegalArgumentException("not an event line: '" + text + "'");
        }
        add(new Event(Kind.valueOf(parts[0]), parts[1], parts[2], Long.parseLong(parts[3]),
                Long.parseLong(parts[4])));
        return true;
    }

    /** The text form of an event, for a child JVM to print: {@code EXCL KIND lock owner token nanos}. */
    static String line(Kind kind, String lock, String owner, long token) {
        if (lock.contains(" ") || owner.contains(" ")) {
            throw new IllegalArgumentException("lock and owner must not contain spaces: " + lock + ", " + owner);
        }
        return PREFIX + kind + " " + lock + " " + owner + " " + token + " " + System.nanoTime();
    }

    /** Replays every event recorded so far in stamp order. */
    synchronized Report report() {
        List<Event> ordered = new ArrayList<>(events);
        ordered.sort(Comparator.comparingLong(Event::nanos));
        Map<String, Map<String, Long>> inside = new HashMap<>();
        Map<String, Long> highestEntered = new HashMap<>();
        Map<String, String> highestOwners = new HashMap<>();
        Map<String, Long> highestWritten = new HashMap<>();
        List<String> violations = new ArrayList<>();
        int entries = 0;
        int overlaps = 0;
        int regressions = 0;
        int accepted = 0;
        int refused = 0;
        for (Event e : ordered) {
            Map<String, Long> owners = inside.computeIfAbsent(e.lock(), k -> new HashMap<>());
            switch (e.kind()) {
                case ENTER -> {
                    entries++;
                    if (!owners.isEmpty() && !(owners.size() == 1 && owners.containsKey(e.owner()))) {
                        overlaps++;
                        violations.add("overlap on " + e.lock() + ": " + e.owner() + " (token " + e.token()
                                + ") entered while " + owners + " inside");
                    }
                    Long highest = highestEntered.get(e.lock());
                    String highestOwner = highestOwners.get(e.lock());
                    if (highest != null && (e.token() < highest
                            || e.token() == highest && !e.owner().equals(highestOwner))) {
                        regressions++;
                        violations.add("token regression on " + e.lock() + ": " + e.owner() + " entered with "
                                + e.token() + " after " + highestOwner + " with " + highest);
                    }
                    if (highest == null || e.token() > highest) {
                        highestEntered.put(e.lock(), e.token());
                        highestOwners.put(e.lock(), e.owner());
                    }
                    owners.put(e.owner(), e.token());
                }
                case WRITE -> {
                    long highest = highestWritten.getOrDefault(e.lock(), Long.MIN_VALUE);
                    if (e.token() >= highest) {
                        accepted++;
                        highestWritten.put(e.lock(), e.token());
                    } else {
                        refused++;
                        violations.add("stale write on " + e.lock() + " refused: " + e.owner() + " wrote with "
                                + e.token() + " after " + highest);
                    }
                }
                case LEAVE -> owners.remove(e.owner());
            }
        }
        return new Report(entries, overlaps, regressions, accepted, refused, List.copyOf(violations));
    }
}
