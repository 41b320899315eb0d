package dev.relock.internal.redlock;

import dev.relock.LeaseLostException;
import dev.relock.LeaseState;
import dev.relock.LockHandle;
import dev.relock.LockInfo;
import dev.relock.internal.Hold;
import dev.relock.internal.HoldHandle;
import dev.relock.internal.HoldingLock;
import dev.relock.internal.IoThreads;
import dev.relock.internal.LockKeys;
import dev.relock.internal.LockMode;
import io.lettuce.core.ScriptOutputType;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One mode of a lock on Redlock: the exclusive lock and the write half of a read-write lock are
 * the WRITE mode of a name, the read half its READ mode (see {@link dev.relock.RelockLock} for the
 * contract, {@link RedlockClient} for the design and the read-write invariant). Writers wait in
 * turns: a queue on every node, and a release hands the turn to its first writer (see
 * {@link RedlockAcquisition}); readers race, with random jitter. Fresh acquisitions, and their waiting,
 * are a {@link RedlockAcquisition}; the blocking methods wait for it in the caller's thread, the
 * asynchronous ones hand out its future for a hold owned by the handle ({@code <client id>:h<n>}).
 * Stateless: holds live in the client's table.
 */
final class RedlockLock extends HoldingLock {

    private static final Logger log = LoggerFactory.getLogger(RedlockLock.class);

    private final RedlockClient client;
    private final String name;
    private final LockKeys keys;
    private final LockMode mode;

    RedlockLock(RedlockClient client, String name, LockKeys keys, LockMode mode) {
        this.client = client;
        this.name = name;
        this.keys = keys;
        this.mode = mode;
    }

    @Override
    public String name() {
        return name;
    }

    // ---- acquiring ------------------------------------------------------------------------

    @Override
    protected LockHandle handleOf(Hold hold) {
        return new HoldHandle(client::release, hold);
    }

    /**
     * Acquires or re-enters the lock for the current thread.
     *
     * @param waitNanos how long to wait; zero or less tries once
     * @param forever wait without a deadline
     * @param leaseMillis an explicit lease, or {@link #RENEWED} for the client's renewed lease
     * @return the hold, or null if the wait ended first
     */
    @Override
    protected Hold acquire(long waitNanos, boolean forever, long leaseMillis, boolean interruptible)
            throws InterruptedException {
        client.ensureOpen();
        if (interruptible && Thread.interrupted()) {
            throw new InterruptedException("interrupted before acquiring " + describe(mode, name));
        }
        boolean renewed = leaseMillis == RENEWED;
        long lease = renewed ? client.defaultLeaseMillis() : leaseMillis;
        String owner = client.ownerOfCurrentThread();
        Hold held = client.holds().get(keys, mode, owner);
        if (held != null) {
            return reenter(held, lease, renewed);
        }
        if (mode == LockMode.WRITE && client.holds().get(keys, LockMode.READ, owner) != null) {
            throw upgradeRefused(name);
        }
        return new RedlockAcquisition(client, name, keys, mode, owner, lease, renewed)
                .run(waitNanos, forever, interruptible);
    }

    // ---- acquiring for a handle ------------------------------------------------------------

    @Override
    protected RedlockAcquisition handleOwned(long leaseMillis) {
        client.ensureOpen();
        boolean renewed = leaseMillis == RENEWED;
        return new RedlockAcquisition(client, name, keys, mode, client.newHolderId(),
                renewed ? client.defaultLeaseMillis() : leaseMillis, renewed);
    }

    private Hold reenter(Hold held, long lease, boolean renewed) {
        if (held.state() == LeaseState.LOST || held.leaseEndedBy(System.nanoTime())) {
            if (held.state() == LeaseState.HELD) {
                client.reportLost(held, "its lease (minus clock drift) ran out while it was held");
            }
            throw new LeaseLostException(name, held.lostReason() + "; unlock() the earlier holds first");
        }
        long sent = System.nanoTime();
        long start = sent - client.drift().nanosFor(lease);
        if (!renewed && start + TimeUnit.MILLISECONDS.toNanos(lease) - held.leaseEndNanos() > 0) {
            // a longer explicit lease than the hold has: a majority must grant it first
            extend(held, lease);
            held.reenter(lease, false, start);
        } else {
            // the hold's lease stands: a lease of 0 ending at its end changes nothing
            held.reenter(0, renewed, held.leaseEndNanos());
        }
        return held;
    }

    /** Extends the lease of a held lock on a majority, for a re-entry with a longer explicit lease. */
    private void extend(Hold held, long lease) {
        Poll<List<Long>> poll = client.poll(IoThreads.offIo(client.timer(),
                () -> client.<List<Long>>sendToEachInOrder(RedlockClient.RENEW, ScriptOutputType.MULTI,
                        new String[] {keys.lock(), keys.leases()}, RedlockClient.member(held), Long.toString(lease))),
                codes -> codes.get(0) == 1L);
        poll.awaitDecision(client.timeoutNanos());
        if (poll.won()) {
            return;
        }
        if (poll.no() > client.nodeCount() - client.majority()) {
            client.reportLost(held, "a majority of the nodes no longer had it at re-entry");
            throw new LeaseLostException(name, held.lostReason() + "; unlock() the earlier holds first");
        }
        throw client.unavailable("re-entry", name, poll);
    }

    // ---- releasing ------------------------------------------------------------------------

    @Override
    public void unlock() {
        client.ensureOpen();
        Hold hold = client.holds().get(keys, mode, client.ownerOfCurrentThread());
        if (hold == null) {
            throw new IllegalMonitorStateException(describe(mode, name) + " is not held by the current thread ("
                    + Thread.currentThread().getName() + ")");
        }
        client.release(hold);
    }

    @Override
    public boolean forceUnlock() {
        client.ensureOpen();
        Poll<Long> poll = client.forceRelease(keys);
        poll.awaitAll(client.timeoutNanos());
        if (poll.answered() < client.majority()) {
            throw client.unavailable("force-unlock", name, poll);
        }
        boolean held = poll.won();
        if (held) {
            log.info("lock '{}' was forced open on every Redlock node by client {}", name, client.clientId());
        }
        return held;
    }

    // ---- inspecting -----------------------------------------------------------------------

    @Override
    public boolean isLocked() {
        return client.inspect(name).isHeld();
    }

    @Override
    protected Hold currentThreadsHold() {
        return client.holds().get(keys, mode, client.ownerOfCurrentThread());
    }

    @Override
    public Optional<Duration> remainingLease() {
        LockInfo info = client.inspect(name);
        return info.isHeld() ? Optional.of(info.remainingLease()) : Optional.empty();
    }

    @Override
    public OptionalLong fencingToken() {
        LockInfo info = client.inspect(name);
        return info.isHeld() ? OptionalLong.of(info.fencingToken()) : OptionalLong.empty();
    }

    // ---- arguments ------------------------------------------------------------------------

    @Override
    protected long leaseMillis(long lease, TimeUnit unit) {
        long millis = super.leaseMillis(lease, unit);
        if (client.drift().validNanos(millis) <= 0) {
            throw new IllegalArgumentException("lease of lock '" + name + "' must be longer than the Redlock clock"
                    + " drift allowance of " + TimeUnit.NANOSECONDS.toMillis(client.drift().nanosFor(millis))
                    + " ms: " + lease + " " + unit);
        }
        return millis;
    }

    @Override
    public String toString() {
        return "RelockLock[" + name + (mode == LockMode.READ ? ", read" : "") + ", Redlock]";
    }
}
