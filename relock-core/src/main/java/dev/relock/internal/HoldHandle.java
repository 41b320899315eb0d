package dev.relock.internal;

import dev.relock.LeaseLost;
import dev.relock.LeaseState;
import dev.relock.LockHandle;
import java.util.concurrent.CompletionStage;
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
    public String toString() {
        return "LockHandle[" + hold.lockName + ", token " + hold.fencingToken + ", " + state() + "]";
    }
}
