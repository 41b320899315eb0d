package dev.relock.bench;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

/**
 * The lock of a subject written for the bench (the floor and the diagnostics), which the scenarios drive through
 * {@link #lock()} and {@link #unlock()} only: an interruptible lock is a plain one, and the rest is refused.
 */
interface ScenarioLock extends Lock {

    @Override
    default void lockInterruptibly() {
        lock();
    }

    @Override
    default boolean tryLock() {
        throw new UnsupportedOperationException();
    }

    @Override
    default boolean tryLock(long time, TimeUnit unit) {
        throw new UnsupportedOperationException();
    }

    @Override
    default Condition newCondition() {
        throw new UnsupportedOperationException();
    }
}
