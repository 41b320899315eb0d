package dev.relock.internal.metrics;

import java.util.Objects;
import java.util.function.LongConsumer;

/**
 * One call of a caller that may try to acquire one lock several times (the Spring starter's
 * {@code @DistributedLock} method, which tries again while Redis cannot be reached within its {@code waitFor}),
 * counted by {@code relock.acquire} as one acquisition: its first try that ends with the lock or without it
 * (timed out, or {@code skipped} where the caller skips a lock it did not get), or else, at {@link #end}, the last
 * try's failure; timed from the call's start. The acquisitions that start on a thread inside {@link #run} report
 * to it; the others, as ever, each count for itself.
 *
 * <p>Invariants. At most one outcome of a call is recorded ({@link #recorded}). A failure is held back
 * ({@link #pendingFailure}) until the call ends, since the caller may try again; a later try's outcome replaces it.
 * A try whose outcome comes after {@link #end} (one cancelled as the call ended) is recorded if the call recorded
 * nothing. Tries report from any thread (an asynchronous try ends on a Lettuce thread), so the state is guarded
 * by this object; recording runs outside it.
 *
 * <p>Public because the starter makes calls; no Micrometer type is named here, so it loads without Micrometer.
 */
public final class CountedCall {

    /** The outcome a try that ended without the lock is counted as when the caller skips such calls. */
    public static final String SKIPPED = "skipped";

    private static final ThreadLocal<CountedCall> CURRENT = new ThreadLocal<>();

    private final long startNanos = System.nanoTime();
    private final boolean skipsWhenNotAcquired;
    // all guarded by this
    private boolean recorded;
    private boolean ended;
    private LongConsumer pendingFailure;
    private long pendingFailureNanos;

    private CountedCall(boolean skipsWhenNotAcquired) {
        this.skipsWhenNotAcquired = skipsWhenNotAcquired;
    }

    /**
     * A call starting now; {@link #end} it when its caller has its outcome.
     *
     * @param skipsWhenNotAcquired whether the caller skips its work when it did not get the lock, so that a
     *     try that ends without it counts as {@value #SKIPPED}, not {@code timed_out}
     */
    public static CountedCall start(boolean skipsWhenNotAcquired) {
        return new CountedCall(skipsWhenNotAcquired);
    }

    /** The call that acquisitions started on this thread now report to, or null. */
    static CountedCall current() {
        return CURRENT.get();
    }

    /** Something that starts one try (a {@code tryLock}, a {@code tryAcquireAsync}). */
    @FunctionalInterface
    public interface Try<T, E extends Exception> {
        /** Starts the try; a blocking one also waits for its outcome. */
        T start() throws E;
    }

    /** Starts {@code oneTry} on this thread with this call current, so the acquisition it starts reports here. */
    public <T, E extends Exception> T run(Try<T, E> oneTry) throws E {
        Objects.requireNonNull(oneTry, "oneTry");
        CountedCall outer = CURRENT.get();
        CURRENT.set(this);
        try {
            return oneTry.start();
        } finally {
            if (outer == null) {
                CURRENT.remove();
            } else {
                CURRENT.set(outer);
            }
        }
    }

    /** The outcome a try that ended without the lock (its wait over, interrupted, cancelled) counts as. */
    String notAcquiredOutcome(String timedOut) {
        return skipsWhenNotAcquired ? SKIPPED : timedOut;
    }

    /**
     * A try ended with the lock or without it: {@code record} takes the call's time, unless the call recorded its
     * outcome already.
     */
    void tryEnded(LongConsumer record) {
        synchronized (this) {
            if (recorded) {
                return;
            }
            recorded = true;
            pendingFailure = null;
        }
        record.accept(System.nanoTime() - startNanos);
    }

    /**
     * A try failed: {@code record} takes the call's time up to now if the call ends without another outcome, or at
     * once if it ended already.
     */
    void tryFailed(LongConsumer record) {
        long nanos = System.nanoTime() - startNanos;
        synchronized (this) {
            if (recorded) {
                return;
            }
            if (!ended) {
                pendingFailure = record;
                pendingFailureNanos = nanos;
                return;
            }
            recorded = true;
        }
        record.accept(nanos);
    }

    /** The caller has its outcome: the last try's failure is recorded, unless a try recorded an outcome. Idempotent. */
    public void end() {
        LongConsumer failure;
        long nanos;
        synchronized (this) {
            if (ended) {
                return;
            }
            ended = true;
            failure = pendingFailure;
            nanos = pendingFailureNanos;
            pendingFailure = null;
            if (failure == null) {
                return;
            }
            recorded = true;
        }
        failure.accept(nanos);
    }
}
