package dev.relock.internal;

import dev.relock.LeaseLost;
import dev.relock.LeaseState;
import dev.relock.LockHandle;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/** One acquisition of a {@link Hold}; closing it gives up that one hold, once. */
public class HoldHandle implements LockHandle {

    private final Consumer<Hold> release;
    private final Hold hold;
    private final AtomicBoolean closed = new AtomicBoolean();

    HoldHandle(LettuceRelockClient client, Hold hold) {
        this(client::release, hold);
    }

    /** A handle whose close() gives the hold to {@code release}, once. */
    public HoldHandle(Consumer<Hold> release, Hold hold) {
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
            release.accept(hold);
        }
    }

    @Override
    public String toString() {
        return "LockHandle[" + hold.lockName + ", token " + hold.fencingToken + ", " + state() + "]";
    }
}
