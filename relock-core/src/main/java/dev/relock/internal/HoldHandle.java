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
class HoldHandle implements LockHandle {

    private final LettuceRelockClient client;
    private final Hold hold;
    private final AtomicBoolean closed = new AtomicBoolean();

    HoldHandle(LettuceRelockClient client, Hold hold) {
        this.client = client;
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
            client.release(hold);
        }
    }

    @Override
    public void releaseAfter(Duration delay) {
        Objects.requireNonNull(delay, "delay");
        if (closed.compareAndSet(false, true)) {
            long nanos = Durations.saturatedNanos(delay);
            // a positive delay shorter than a millisecond still delays
            client.release(hold, nanos <= 0 ? 0 : Math.max(1, TimeUnit.NANOSECONDS.toMillis(nanos)));
        }
    }

    @Override
    public String toString() {
        return "LockHandle[" + hold.lockName + ", token " + hold.fencingToken + ", " + state() + "]";
    }
}
