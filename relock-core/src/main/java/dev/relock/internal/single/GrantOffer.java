package dev.relock.internal.single;

/**
 * Which of one {@link Acquisition}'s attempts a grant on release may be taken for, and a grant for it that arrived
 * while that attempt was in flight (the acquisition's notes say when a grant is taken). Ids are unique in the client,
 * from 1; a hand-over that names the acquisition successor has one as an attempt does.
 *
 * <p>Invariants. Only the latest attempt's grant may be taken, and none once a withdraw was sent after it (the id is
 * 0 then: the withdraw undoes the grant in Redis). A grant waits at most for the attempt it is for: it is dropped when
 * the next attempt is sent or a withdraw is. What waits for a waiting grant to be handled runs once, when it is.
 * Guarded by the acquisition's lock.
 */
final class GrantOffer {

    private long attemptId;
    // when the latest attempt was sent (the client's ticker): the lease of a grant for it runs from then
    private long sentNanos;
    // a grant for the latest attempt arrived while that attempt was in flight
    private boolean waiting;
    // what runs once that grant was handled (the attempt's reply came: it took the grant, or the next attempt is sent
    // to take it, or it was dropped): the end of the hand-over that made it (LocalLines), or null
    private Runnable onHandled;

    /** Attempt {@code id} is sent at {@code nanos}: a grant waiting for an earlier one is dropped. */
    void attemptSent(long id, long nanos) {
        dropWaiting();
        attemptId = id;
        sentNanos = nanos;
    }

    /**
     * Hand-over {@code id}, whose release was sent at {@code nanos}, names this acquisition successor: a grant for it
     * is taken as an attempt's would be.
     */
    void handOverSent(long id, long nanos) {
        waiting = false;
        attemptId = id;
        sentNanos = nanos;
    }

    /** A withdraw is sent: it undoes a grant to any attempt sent before it, so none may be taken any more. */
    void withdrawn() {
        attemptId = 0;
        dropWaiting();
    }

    /** Whether a grant for {@code attempt} may be taken: it is the latest, and no withdraw followed it. */
    boolean isFor(long attempt) {
        return attempt == attemptId;
    }

    /** When the latest attempt was sent. */
    long sentNanos() {
        return sentNanos;
    }

    /** A grant for the latest attempt arrived while it is in flight; {@code over} runs once it is handled. */
    void arrivedInFlight(Runnable over) {
        waiting = true;
        handled();
        onHandled = over;
    }

    /** Whether a grant waits for the reply just in; it waits no more. */
    boolean takeWaiting() {
        boolean was = waiting;
        waiting = false;
        return was;
    }

    /** Whether {@code over} waits for a grant to be handled. */
    boolean awaits(Runnable over) {
        return onHandled == over;
    }

    /** Runs what waits for a grant to be handled, if anything does. */
    void handled() {
        Runnable over = onHandled;
        if (over != null) {
            onHandled = null;
            over.run();
        }
    }

    private void dropWaiting() {
        waiting = false;
        handled();
    }

    @Override
    public String toString() {
        return "attemptId=" + attemptId + ", grantWaiting=" + waiting;
    }
}
