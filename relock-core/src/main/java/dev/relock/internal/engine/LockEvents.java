package dev.relock.internal.engine;

import dev.relock.LockKind;
import io.lettuce.core.api.StatefulConnection;
import java.util.List;

/**
 * Where a client reports what its locks do, for metrics and traces: acquisitions with their
 * outcome, holds from acquisition to release or loss, renewals.
 *
 * <p>Without a registry the client uses {@link #NONE}, whose methods do nothing and hand out
 * itself, so the hot path allocates nothing for it. The Micrometer implementation, in the metrics
 * package, is made by {@code Instrumentation.events}. Implementations are thread-safe.
 *
 * <p>Public because both engines, each in a package of its own, report to it, and the metrics package
 * implements it.
 */
public interface LockEvents {

    /** The events of no registry: every method does nothing. */
    LockEvents NONE = NoLockEvents.INSTANCE;

    /** The span of a hold nobody observes: its method does nothing. */
    HoldSpan NO_SPAN = NoLockEvents.INSTANCE;

    /** The kind tag of a multi-lock's acquisition as a whole. */
    String MULTI = "multi";

    /** The kind of a hold in this mode; its label is the hold's {@code kind} tag. */
    static LockKind kindOf(LockMode mode) {
        return switch (mode) {
            case WRITE -> LockKind.EXCLUSIVE;
            case READ -> LockKind.SHARED;
            case PERMITS -> LockKind.SEMAPHORE;
        };
    }

    /** A fresh acquisition of a lock or semaphore begins (re-entries are not reported). */
    Wait waitStarted(LockMode mode, String name);

    /** A multi-lock's acquisition begins; its members may report acquisitions of their own. */
    Wait multiWaitStarted(List<String> names);

    /** A hold was taken without an acquisition of its own (the multi-lock's one-script path). */
    void held(Hold hold);

    /**
     * A thread's wait for the count-down latch {@code name} ended after {@code nanos}: {@code opened},
     * {@code timeout}, {@code interrupted}, {@code expired} (deleted before reaching zero) or {@code failed}.
     */
    default void latchWaitEnded(String name, long nanos, String outcome) {}

    /**
     * A thread's wait in a condition of the lock {@code name} ended after {@code nanos} (not counting the lock's
     * re-acquisition): {@code signalled}, {@code timeout}, {@code interrupted} or {@code failed}.
     */
    default void conditionWaitEnded(String name, long nanos, String outcome) {}

    /** The lease keeper renewed {@code holds} leases ({@code ok}) or failed to. */
    void renewals(boolean ok, int holds);

    /**
     * The client's command connection to {@code node}, one of those it was made for, was made (once per node): it
     * counts for that node's up gauge until {@link #close}.
     */
    default void nodeConnected(String node, StatefulConnection<?, ?> connection) {}

    /**
     * The client could not be made (its nodes could not be reached): its connections count no more, but the up
     * gauges of its nodes stay, reading 0 unless another client connects, so that a Redis that was down when the
     * application started reads as down, not as absent. Nothing is reported after it.
     */
    default void connectFailed() {}

    /** The client is closing: meters that describe only it go away. */
    void close();

    /** One acquisition under way; exactly one of its methods is called, once, when it ends. */
    interface Wait {

        /** It ended with the hold, or with null for a multi-lock (its holds are reported apiece). */
        void acquired(Hold hold);

        /** The wait ended without the lock: its time was up, or it was interrupted or cancelled. */
        void timedOut();

        /** The acquisition failed (Redis unavailable, refused, client closed). */
        void failed(Throwable error);
    }

    /** One hold from acquisition on; ended once, by the hold itself, at release or loss. */
    interface HoldSpan {

        /** The hold was released, or its lease was lost; later calls do nothing. */
        void ended(Hold hold, boolean lost);
    }
}
