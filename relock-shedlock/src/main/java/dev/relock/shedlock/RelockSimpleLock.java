package dev.relock.shedlock;

import dev.relock.LeaseLostException;
import dev.relock.LockHandle;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One held job lock. Any thread may unlock it, once; the hold belongs to the handle, not to a
 * thread. {@code lockAtLeastFor} counts from {@code startNanos} (System.nanoTime() before the
 * acquisition), never from wall-clock time.
 */
final class RelockSimpleLock implements SimpleLock {

    private static final Logger log = LoggerFactory.getLogger(RelockSimpleLock.class);

    private final LockHandle handle;
    private final Duration lockAtLeastFor;
    private final long startNanos;
    private final AtomicBoolean unlocked = new AtomicBoolean();

    RelockSimpleLock(LockHandle handle, Duration lockAtLeastFor, long startNanos) {
        this.handle = handle;
        this.lockAtLeastFor = lockAtLeastFor;
        this.startNanos = startNanos;
    }

    /**
     * Gives up the lock, or leaves it taken until {@code lockAtLeastFor} has passed since it was
     * taken. A lease that ran out before (the job ran past {@code lockAtMostFor}, or the lease
     * was lost) is logged, not thrown: ShedLock's own providers do not fail the job for it.
     *
     * @throws IllegalStateException if this lock was unlocked before
     */
    @Override
    public void unlock() {
        if (!unlocked.compareAndSet(false, true)) {
            throw new IllegalStateException("Lock '" + handle.name() + "' was already unlocked");
        }
        Duration keepFor = lockAtLeastFor.minusNanos(System.nanoTime() - startNanos);
        try {
            handle.releaseAfter(keepFor);
        } catch (LeaseLostException e) {
            log.warn("Lock '{}' was lost before the job finished: {}", handle.name(), e.getMessage());
        }
    }

    @Override
    public String toString() {
        return "RelockSimpleLock{" + handle.name() + ", " + handle.state() + "}";
    }
}
