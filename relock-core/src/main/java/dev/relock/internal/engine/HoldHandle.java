package dev.relock.internal.engine;

import dev.relock.LeaseLost;
import dev.relock.LeaseLostException;
import dev.relock.LeaseState;
import dev.relock.LockHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

/**
 * One acquisition of a {@link Hold}; closing it gives up that one hold, once. Kept by the caller
 * for as long as the hold lasts, so it is one small object: the closed flag is a field set through
 * a VarHandle, and the engine that releases and extends the hold is the client's one instance.
 *
 * <p>Public because the single-server engine makes handles of holds it takes at once (multi-lock) and semaphore permits.
 */
public class HoldHandle implements LockHandle {

    private static final VarHandle CLOSED;

    static {
        try {
            CLOSED = MethodHandles.lookup().findVarHandle(HoldHandle.class, "closed", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final Engine engine;
    private final Hold hold;
    private volatile boolean closed; // CLOSED

    /** A handle whose close() or releaseAfter(...) gives the hold up through {@code engine}, once. */
    public HoldHandle(Engine engine, Hold hold) {
        this.engine = engine;
        this.hold = hold;
    }

    @Override
    public String name() {
        return hold.lockName;
    }

    @Override
    public long fencingToken() {
        return hold.fencingToken;
    }

    @Override
    public LeaseState state() {
        LeaseState state = hold.state();
        return closed && state == LeaseState.HELD ? LeaseState.RELEASED : state;
    }

    @Override
    public CompletionStage<LeaseLost> whenLost() {
        return hold.whenLost().minimalCompletionStage();
    }

    @Override
    public void close() {
        if (CLOSED.compareAndSet(this, false, true)) {
            engine.release(hold, 0, true);
        }
    }

    @Override
    public void releaseAfter(Duration delay) {
        Objects.requireNonNull(delay, "delay");
        if (CLOSED.compareAndSet(this, false, true)) {
            long nanos = Durations.saturatedNanos(delay);
            // a positive delay shorter than a millisecond still delays
            try {
                engine.release(hold, nanos <= 0 ? 0 : Math.max(1, TimeUnit.NANOSECONDS.toMillis(nanos)), true);
            } catch (IllegalStateException refused) {
                // refused before anything was sent (a downgraded write hold): still held, and still to close
                CLOSED.set(this, false);
                throw refused;
            }
        }
    }

    @Override
    public void extendLease(Duration lease) {
        long leaseMillis = Durations.leaseMillis(lease, hold.mode.description + " '" + hold.lockName + "'");
        engine.checkLease(hold.lockName, leaseMillis, lease.toString());
        if (closed) {
            throw new IllegalStateException("the handle of '" + hold.lockName + "' (fencing token " + hold.fencingToken
                    + ") is closed: its hold was given up, and there is no lease left to extend");
        }
        if (hold.state() == LeaseState.LOST) {
            // told once already, when it was found lost
            throw new LeaseLostException(hold.lockName, hold.lostReason());
        }
        engine.extendLease(hold, leaseMillis);
    }

    @Override
    public String toString() {
        return "LockHandle[" + hold.lockName + ", token " + hold.fencingToken + ", " + state() + "]";
    }
}
