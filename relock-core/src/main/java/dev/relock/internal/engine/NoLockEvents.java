package dev.relock.internal.engine;

import java.util.List;

/** {@link LockEvents#NONE}: no registry, nothing to do; one instance plays every part. */
enum NoLockEvents implements LockEvents, LockEvents.Wait, LockEvents.HoldSpan {
    INSTANCE;

    @Override
    public Wait waitStarted(LockMode mode, String name) {
        return this;
    }

    @Override
    public Wait multiWaitStarted(List<String> names) {
        return this;
    }

    @Override
    public void held(Hold hold) {}

    @Override
    public void renewals(boolean ok, int holds) {}

    @Override
    public void close() {}

    @Override
    public void acquired(Hold hold) {}

    @Override
    public void timedOut() {}

    @Override
    public void failed(Throwable error) {}

    @Override
    public void ended(Hold hold, boolean lost) {}
}
