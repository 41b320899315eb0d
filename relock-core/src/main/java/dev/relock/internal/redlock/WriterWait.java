package dev.relock.internal.redlock;

import dev.relock.internal.engine.Ticker;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * What one acquisition's attempts tell every node about its wait (acquire.lua's ARGV[3], ARGV[4] and ARGV[7]), and
 * its clean-ups put back for a writer that goes on waiting: the writer's mark, which keeps new readers out of the lock
 * (writer preference); how long it has waited, from which a node that queues it reckons its place by that node's own
 * clock; and its place in every node's queue, once the nodes gave one. Only a writer that waits {@link #marks}: a
 * reader and a single try send no mark, "0" waited and no place.
 *
 * <p>Made by the acquisition's first step; not thread-safe: guarded by the acquisition's lock.
 */
final class WriterWait {

    private final Ticker ticker;
    private final boolean marks;
    private final boolean once;
    private final boolean forever;
    private final long deadline;
    private final long markCapMillis;
    // when the wait began (ticker), unless once
    private final long began;
    // the median of the places the nodes gave the first refused attempt, or "" until then
    private String place = "";

    /**
     * @param writer whether the acquisition is a writer's
     * @param once a single try, not a wait
     * @param forever a wait without a deadline
     * @param deadline the wait's end (ticker), unless forever
     * @param defaultLeaseMillis the client's default lease: a mark lasts 1.5 of them at most
     */
    WriterWait(Ticker ticker, boolean writer, boolean once, boolean forever, long deadline, long defaultLeaseMillis) {
        this.ticker = ticker;
        this.marks = writer && !once;
        this.once = once;
        this.forever = forever;
        this.deadline = deadline;
        this.markCapMillis = defaultLeaseMillis * 3 / 2;
        this.began = once ? 0 : ticker.nanoTime();
    }

    /** Whether the attempts mark a waiting writer on the nodes (and its clean-ups must take the mark away). */
    boolean marks() {
        return marks;
    }

    /** How long this wait has lasted, in microseconds of the ticker; "0" for a single try. */
    String waitedMicros() {
        return once ? "0" : Long.toString(Math.max(0, (ticker.nanoTime() - began) / 1_000));
    }

    /**
     * How long a refused writer keeps new readers out on a node: until the end of its wait, at most 1.5 default
     * leases (its next attempt, which renews the mark, comes sooner: a release message, or the readers' leases
     * ending, which are at most one default lease away); 0 for what does not {@link #marks mark}. A waiting writer
     * that crashed keeps new readers out that long at most.
     */
    long markMillis() {
        if (!marks) {
            return 0;
        }
        long left = TimeUnit.NANOSECONDS.toMillis(deadline - ticker.nanoTime()) + 1;
        return Math.max(1, forever ? markCapMillis : Math.min(markCapMillis, left));
    }

    /** The writer's place in every node's queue, or "" until the nodes gave one. */
    String place() {
        return place;
    }

    /**
     * Takes the place the nodes that refused an attempt gave the writer ({@link AttemptAnswers#agreedPlace}), unless
     * it has one: one place for all nodes, kept for the whole wait.
     */
    void placeFrom(List<List<Object>> answers) {
        if (place.isEmpty()) {
            place = AttemptAnswers.agreedPlace(answers);
        }
    }

    @Override
    public String toString() {
        return "place=" + place;
    }
}
