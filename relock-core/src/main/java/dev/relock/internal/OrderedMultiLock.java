package dev.relock.internal;

import dev.relock.LockHandle;
import dev.relock.MultiLockHandle;
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

/**
 * A multi-lock that takes its locks one by one in the order of their keys (see
 * {@link RelockMultiLock}); on any failure or timeout it releases what it took, in reverse.
 * Stateless beyond the sorted locks; the holds are those of the member locks.
 */
final class OrderedMultiLock implements RelockMultiLock {

    private final List<RelockLock> locks;
    private final List<String> names;

    /** @param locks the member locks, already in their global order */
    OrderedMultiLock(List<RelockLock> locks) {
        this.locks = List.copyOf(locks);
        this.names = locks.stream().map(RelockLock::name).toList();
    }

    @Override
    public List<String> names() {
        return names;
    }

    @Override
    public void lock() {
        locks.forEach(RelockLock::lock);
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        List<RelockLock> taken = new ArrayList<>();
        try {
            for (RelockLock lock : locks) {
                lock.lockInterruptibly();
                taken.add(lock);
            }
        } catch (InterruptedException | RuntimeException e) {
            unlockAll(taken);
            throw e;
        }
    }

    @Override
    public boolean tryLock() {
        List<RelockLock> taken = new ArrayList<>();
        try {
            for (RelockLock lock : locks) {
                if (!lock.tryLock()) {
                    unlockAll(taken);
                    return false;
                }
                taken.add(lock);
            }
            return true;
        } catch (RuntimeException e) {
            unlockAll(taken);
            throw e;
        }
    }

    @Override
    public boolean tryLock(long wait, TimeUnit unit) throws InterruptedException {
        long deadline = System.nanoTime() + Math.min(unit.toNanos(wait), Long.MAX_VALUE / 2);
        List<RelockLock> taken = new ArrayList<>();
        try {
            for (RelockLock lock : locks) {
                if (!lock.tryLock(deadline - System.nanoTime(), TimeUnit.NANOSECONDS)) {
                    unlockAll(taken);
                    return false;
                }
                taken.add(lock);
            }
            return true;
        } catch (InterruptedException | RuntimeException e) {
            unlockAll(taken);
            throw e;
        }
    }

    @Override
    public void unlock() {
        unlockAll(locks);
    }

    @Override
    public MultiLockHandle acquire() {
        List<LockHandle> taken = new ArrayList<>();
        try {
            for (RelockLock lock : locks) {
                taken.add(lock.acquire());
            }
        } catch (RuntimeException e) {
            closeAll(taken);
            throw e;
        }
        return new Handle(taken);
    }

    @Override
    public Optional<MultiLockHandle> tryAcquire(Duration wait) throws InterruptedException {
        return tryAcquire(wait, null);
    }

    @Override
    public Optional<MultiLockHandle> tryAcquire(Duration wait, Duration lease) throws InterruptedException {
        Objects.requireNonNull(wait, "wait");
        long deadline = System.nanoTime() + Math.min(Durations.saturatedNanos(wait), Long.MAX_VALUE / 2);
        List<LockHandle> taken = new ArrayList<>();
        try {
            for (RelockLock lock : locks) {
                Duration left = Duration.ofNanos(deadline - System.nanoTime());
                Optional<LockHandle> handle = lease == null ? lock.tryAcquire(left) : lock.tryAcquire(left, lease);
                if (handle.isEmpty()) {
                    closeAll(taken);
                    return Optional.empty();
                }
                taken.add(handle.get());
            }
        } catch (InterruptedException | RuntimeException e) {
            closeAll(taken);
            throw e;
        }
        return Optional.of(new Handle(taken));
    }

    private static void unlockAll(List<RelockLock> taken) {
        inReverse(taken, RelockLock::unlock);
    }

    private static void closeAll(List<LockHandle> taken) {
        inReverse(taken, LockHandle::close);
    }

    /** Releases in reverse order; every one is tried, the first failure is thrown at the end. */
    private static <T> void inReverse(List<T> taken, Consumer<T> release) {
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
