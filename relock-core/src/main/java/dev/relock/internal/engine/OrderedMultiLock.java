package dev.relock.internal.engine;

import dev.relock.LockHandle;
import dev.relock.MultiLockHandle;
import dev.relock.RedisUnavailableException;
import dev.relock.RelockLock;
import dev.relock.RelockMultiLock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongFunction;

/**
 * A multi-lock (see {@link RelockMultiLock}). On one Redis it first tries to take every lock in
 * one script, all or none, in one round trip; otherwise (and on Redlock, which has no such script)
 * it takes them one by one in the order of their keys, waiting for each, and on any failure or
 * timeout releases what it took, in reverse. A wait that finds Redis unavailable at that script goes
 * on one by one too, so it tries again until its deadline as each lock's acquisition does; a single
 * try fails. Stateless beyond the sorted locks; the holds are
 * those of the member locks, so each is released, renewed and fenced as the lock it is.
 *
 * <p>Invariant: an acquisition returns only holds that are all held, their leases not known to be over, once the last
 * was taken. One by one, an earlier hold can be lost while a later lock is awaited (its renewals failed, or its
 * explicit lease ran out): the acquisition then gives up what it took and starts again, as long as its wait lasts (a
 * fault campaign run found a multi-lock that returned a member already lost and told so, and a second holder of it).
 *
 * <p>Public because both engines, each in a package of its own, make multi-locks.
 */
public final class OrderedMultiLock implements RelockMultiLock {

    private final List<RelockLock> locks;
    private final List<String> names;
    private final LockEvents events;
    // all locks at once for the current thread (lease, or EngineClient.RENEWED): their holds, or null when
    // that is not possible; and the handle of one such hold
    private final LongFunction<List<Hold>> atOnce;
    private final Function<Hold, LockHandle> handleOfHold;
    // the client's clock, which the wait's deadline is read on
    private final Ticker ticker;

    /**
     * A multi-lock that first tries {@code atOnce}, then one by one.
     *
     * @param locks the member locks, already in their global order (by lock key)
     * @param atOnce given an explicit lease in ms, or {@link EngineClient#RENEWED}: the holds of every
     *     lock taken at once for the current thread, or null when that is not possible; when it throws
     *     {@link RedisUnavailableException}, what undoes its script has been sent ahead of the thread's
     *     next command
     * @param handleOfHold the handle of one hold {@code atOnce} took
     * @param ticker the client's clock ({@link EngineClient#ticker()})
     */
    public OrderedMultiLock(List<? extends RelockLock> locks, LockEvents events, LongFunction<List<Hold>> atOnce,
            Function<Hold, LockHandle> handleOfHold, Ticker ticker) {
        this.locks = List.copyOf(locks);
        this.names = locks.stream().map(RelockLock::name).toList();
        this.events = events;
        this.atOnce = atOnce;
        this.handleOfHold = handleOfHold;
        this.ticker = ticker;
    }

    /**
     * A multi-lock that takes {@code locks} one by one, for a client without an all-at-once script
     * (Redlock).
     *
     * @param locks the member locks, already in their global order (by lock key)
     * @param ticker the client's clock ({@link EngineClient#ticker()})
     */
    public static RelockMultiLock oneByOne(List<? extends RelockLock> locks, LockEvents events, Ticker ticker) {
        return new OrderedMultiLock(locks, events, leaseMillis -> null, hold -> {
            throw new IllegalStateException("no hold is taken at once");
        }, ticker);
    }


    /**
     * All locks in one script for the current thread, or null when one is not free, or when Redis is unavailable and
     * the wait goes on (it has no deadline, {@code forever}, or its {@code deadline} has not passed): then they are
     * taken one by one. A single try has its deadline at its start.
     */
    private List<Hold> atOnce(long leaseMillis, boolean forever, long deadline) {
        try {
            return atOnce.apply(leaseMillis);
        } catch (RedisUnavailableException e) {
            if (forever || ticker.nanoTime() - deadline < 0) {
                return null;
            }
            throw e;
        }
    }

    private MultiLockHandle handleOf(List<Hold> holds) {
        List<LockHandle> handles = new ArrayList<>();
        holds.forEach(hold -> handles.add(handleOfHold.apply(hold)));
        return new Handle(handles);
    }

    @Override
    public List<String> names() {
        return names;
    }

    @Override
    public void lock() {
        observedUninterruptibly(() -> {
            lockUnobserved();
            return true;
        });
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        observed(() -> {
            lockInterruptiblyUnobserved();
            return true;
        });
    }

    @Override
    public boolean tryLock() {
        return observedUninterruptibly(this::tryLockUnobserved);
    }

    @Override
    public boolean tryLock(long wait, TimeUnit unit) throws InterruptedException {
        return observed(() -> tryLockUnobserved(wait, unit));
    }

    @Override
    public MultiLockHandle acquire() {
        return observedUninterruptibly(this::acquireUnobserved);
    }

    @Override
    public Optional<MultiLockHandle> tryAcquire(Duration wait) throws InterruptedException {
        return tryAcquire(wait, null);
    }

    @Override
    public Optional<MultiLockHandle> tryAcquire(Duration wait, Duration lease) throws InterruptedException {
        return observed(() -> tryAcquireUnobserved(wait, lease));
    }

    /** An acquisition of the whole multi-lock, as it returns: null, false or empty when the wait ended first. */
    private interface Attempt<T> {
        T run() throws InterruptedException;
    }

    /** Runs an acquisition and reports its outcome as kind {@value LockEvents#MULTI}. */
    private <T> T observed(Attempt<T> attempt) throws InterruptedException {
        LockEvents.Wait observed = events.multiWaitStarted(names);
        try {
            T result = attempt.run();
            if (result == null || Boolean.FALSE.equals(result) || Optional.empty().equals(result)) {
                observed.timedOut();
            } else {
                observed.acquired(null);
            }
            return result;
        } catch (InterruptedException | RuntimeException | Error e) {
            observed.failed(e);
            throw e;
        }
    }

    private <T> T observedUninterruptibly(Attempt<T> attempt) {
        try {
            return observed(attempt);
        } catch (InterruptedException e) {
            throw new AssertionError("an uninterruptible acquisition threw InterruptedException", e);
        }
    }

    private void lockUnobserved() {
        while (atOnce(EngineClient.RENEWED, true, 0) == null) {
            List<RelockLock> taken = new ArrayList<>();
            try {
                for (RelockLock lock : locks) {
                    lock.lock();
                    taken.add(lock);
                }
            } catch (RuntimeException e) {
                giveBack(e, () -> unlockAll(taken));
                throw e;
            }
            if (allHeld(taken)) {
                return;
            }
        }
    }

    private void lockInterruptiblyUnobserved() throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException("interrupted before acquiring multi-lock " + names);
        }
        while (atOnce(EngineClient.RENEWED, true, 0) == null) {
            List<RelockLock> taken = new ArrayList<>();
            try {
                for (RelockLock lock : locks) {
                    lock.lockInterruptibly();
                    taken.add(lock);
                }
            } catch (InterruptedException | RuntimeException e) {
                giveBack(e, () -> unlockAll(taken));
                throw e;
            }
            if (allHeld(taken)) {
                return;
            }
        }
    }

    private boolean tryLockUnobserved() {
        if (atOnce(EngineClient.RENEWED, false, ticker.nanoTime()) != null) {
            return true;
        }
        List<RelockLock> taken = new ArrayList<>();
        try {
            for (RelockLock lock : locks) {
                if (!lock.tryLock()) {
                    unlockAll(taken);
                    return false;
                }
                taken.add(lock);
            }
            return allHeld(taken);
        } catch (RuntimeException e) {
            giveBack(e, () -> unlockAll(taken));
            throw e;
        }
    }

    private boolean tryLockUnobserved(long wait, TimeUnit unit) throws InterruptedException {
        long deadline = ticker.nanoTime() + Math.min(unit.toNanos(wait), Long.MAX_VALUE / 2);
        do {
            if (atOnce(EngineClient.RENEWED, false, deadline) != null) {
                return true;
            }
            List<RelockLock> taken = new ArrayList<>();
            try {
                for (RelockLock lock : locks) {
                    if (!lock.tryLock(deadline - ticker.nanoTime(), TimeUnit.NANOSECONDS)) {
                        unlockAll(taken);
                        return false;
                    }
                    taken.add(lock);
                }
            } catch (InterruptedException | RuntimeException e) {
                giveBack(e, () -> unlockAll(taken));
                throw e;
            }
            if (allHeld(taken)) {
                return true;
            }
        } while (ticker.nanoTime() - deadline < 0);
        return false;
    }

    @Override
    public void unlock() {
        unlockAll(locks);
    }

    private MultiLockHandle acquireUnobserved() {
        while (true) {
            List<Hold> atOnce = atOnce(EngineClient.RENEWED, true, 0);
            if (atOnce != null) {
                return handleOf(atOnce);
            }
            List<LockHandle> taken = new ArrayList<>();
            try {
                for (RelockLock lock : locks) {
                    taken.add(lock.acquire());
                }
            } catch (RuntimeException e) {
                giveBack(e, () -> closeAll(taken));
                throw e;
            }
            if (allValid(taken)) {
                return new Handle(taken);
            }
        }
    }

    private Optional<MultiLockHandle> tryAcquireUnobserved(Duration wait, Duration lease)
            throws InterruptedException {
        Objects.requireNonNull(wait, "wait");
        long leaseMillis = EngineClient.RENEWED;
        if (lease != null) {
            if (lease.isZero() || lease.isNegative()) {
                throw new IllegalArgumentException("lease of multi-lock " + names + " must be positive: " + lease);
            }
            leaseMillis = Math.max(1, lease.toMillis());
        }
        long deadline = ticker.nanoTime() + Math.min(Durations.saturatedNanos(wait), Long.MAX_VALUE / 2);
        do {
            List<Hold> atOnce = atOnce(leaseMillis, false, deadline);
            if (atOnce != null) {
                return Optional.of(handleOf(atOnce));
            }
            List<LockHandle> taken = new ArrayList<>();
            try {
                for (RelockLock lock : locks) {
                    Duration left = Duration.ofNanos(deadline - ticker.nanoTime());
                    Optional<LockHandle> handle = lease == null ? lock.tryAcquire(left) : lock.tryAcquire(left, lease);
                    if (handle.isEmpty()) {
                        closeAll(taken);
                        return Optional.empty();
                    }
                    taken.add(handle.get());
                }
            } catch (InterruptedException | RuntimeException e) {
                giveBack(e, () -> closeAll(taken));
                throw e;
            }
            if (allValid(taken)) {
                return Optional.of(new Handle(taken));
            }
        } while (ticker.nanoTime() - deadline < 0);
        return Optional.empty();
    }

    /**
     * Whether the current thread still holds every lock of {@code taken}, each lease not known to be over; if not
     * (one was lost while a later one was awaited), gives them all up, a lost one included, so that the acquisition
     * can start again.
     */
    private static boolean allHeld(List<RelockLock> taken) {
        if (taken.stream().allMatch(RelockLock::isHeldByCurrentThread)) {
            return true;
        }
        giveUpAfterALoss(() -> unlockAll(taken));
        return false;
    }

    /** As {@link #allHeld}, for handles. */
    private boolean allValid(List<LockHandle> taken) {
        long now = ticker.nanoTime();
        if (taken.stream().allMatch(handle -> handle.isValid()
                && !(handle instanceof HoldHandle held && held.hold().leaseEndedBy(now)))) {
            return true;
        }
        giveUpAfterALoss(() -> closeAll(taken));
        return false;
    }

    /**
     * Gives up what an acquisition took when a hold among them was lost: the lost one's release throws (its loss was
     * told as it was found), and one that fails otherwise is given up locally all the same, its key running out in
     * Redis by its lease; either way the acquisition goes on.
     */
    private static void giveUpAfterALoss(Runnable undo) {
        try {
            undo.run();
        } catch (RuntimeException expected) {
            // see above
        }
    }

    /**
     * Gives back what an acquisition that failed with {@code failure} had taken ({@code undo}); a failure of the
     * undo is added to {@code failure} as suppressed, so the caller throws the acquisition's own failure.
     */
    private static void giveBack(Exception failure, Runnable undo) {
        try {
            undo.run();
        } catch (RuntimeException e) {
            failure.addSuppressed(e);
        }
    }

    private static void unlockAll(List<? extends RelockLock> taken) {
        inReverse(taken, RelockLock::unlock);
    }

    private static void closeAll(List<LockHandle> taken) {
        inReverse(taken, LockHandle::close);
    }

    /** Releases in reverse order; every one is tried, the first failure is thrown at the end. */
    private static <T> void inReverse(List<? extends T> taken, Consumer<T> release) {
        RuntimeException first = null;
        for (int i = taken.size() - 1; i >= 0; i--) {
            try {
                release.accept(taken.get(i));
            } catch (RuntimeException e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }

    @Override
    public String toString() {
        return "RelockMultiLock" + names;
    }

    private static final class Handle implements MultiLockHandle {

        private final List<LockHandle> handles;
        private final AtomicBoolean closed = new AtomicBoolean();

        Handle(List<LockHandle> handles) {
            this.handles = Collections.unmodifiableList(handles);
        }

        @Override
        public List<LockHandle> handles() {
            return handles;
        }

        @Override
        public Map<String, Long> fencingTokens() {
            Map<String, Long> tokens = new LinkedHashMap<>();
            handles.forEach(handle -> tokens.put(handle.name(), handle.fencingToken()));
            return tokens;
        }

        @Override
        public void close() {
            if (closed.compareAndSet(false, true)) {
                closeAll(handles);
            }
        }
    }
}
