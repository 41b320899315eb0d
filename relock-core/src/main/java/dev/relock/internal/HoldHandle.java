package dev.relock.internal;

import dev.relock.LeaseLost;
import dev.relock.LeaseState;
import dev.relock.LockHandle;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/** One acquisition of a {@link Hold}; closing it gives up that one hold, once. */
public class HoldHandle implements LockHandle {

    /** Gives up one hold; when it is the owner's last, the lock stays taken {@code delayMillis} (if positive). */
    @FunctionalInterface
    public interface Release {
        void release(Hold hold, long delayMillis);
    }

    private final Release release;
    private final Hold hold;
    private final AtomicBoolean closed = new AtomicBoolean();

    HoldHandle(LettuceRelockClient client, Hold hold) {
        this(client::release, hold);
    }

    /** A handle whose close() or releaseAfter(...) gives the hold to {@code release}, once. */
    public HoldHandle(Release release, Hold hold) {
        this.release = release;
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
        return closed.get() && state == LeaseState.HELD ? LeaseState.RELEASED : state;
    }

    @Override
    public CompletionStage<LeaseLost> whenLost() {
        return hold.whenLost().minimalCompletionStage();
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            release.release(hold, 0);
        }
    }

    @Override
    public void releaseAfter(Duration delay) {
        Objects.requireNonNull(delay, "delay");
        if (closed.compareAndSet(false, true)) {
            long nanos = Durations.saturatedNanos(delay);
            // a positive delay shorter than a millisecond still delays
            release.release(hold, nanos <= 0 ? 0 : Math.max(1, TimeUnit.NANOSECONDS.toMillis(nanos)));
        }
    }

    @Override
    public String toString() {
        return "LockHandle[" + hold.lockName + ", token " + hold.fencingToken + ", " + state() + "]";
    }
}
