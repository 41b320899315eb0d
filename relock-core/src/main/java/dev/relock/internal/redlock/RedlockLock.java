package dev.relock.internal.redlock;

import dev.relock.LeaseLostException;
import dev.relock.LeaseState;
import dev.relock.LockHandle;
import dev.relock.LockInfo;
import dev.relock.RedisUnavailableException;
import dev.relock.internal.HoldingLock;
import dev.relock.internal.Hold;
import dev.relock.internal.HoldHandle;
import dev.relock.internal.LockKeys;
import dev.relock.internal.LockMode;
import io.lettuce.core.ScriptOutputType;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An exclusive lock on Redlock (see {@link RelockLock} for the contract, {@link RedlockClient}
 * for the design). Not fair: there is no queue across nodes; waiters race, with random jitter.
 *
 * <p>One attempt sends acquire.lua to every node at once and waits only for the poll to be
 * decided (at most the command timeout). Won: the maximum of the majority's fencing tokens is
 * written back to a majority, and the hold is valid until {@code sent + lease - drift}; if that
 * has passed already, the attempt counts as lost. Lost or undecided: the attempt is cleaned up
 * on every node, and the thread waits
 * <ul>
 *   <li>when one owner holds a majority: for a release announcement or until enough of its
 *       leases run out for a majority to be free, then a random jitter;</li>
 *   <li>when nobody holds a majority (competitors split the nodes): a random back-off that grows
 *       with repeated splits, so competing clients do not collide forever;</li>
 *   <li>when fewer than a majority answered: a growing back-off, then another attempt; a wait
 *       that ends so (and {@code tryLock()} without a wait) fails with
 *       {@link RedisUnavailableException}, at most a command timeout after its end.</li>
 * </ul>
 * It never polls at a fixed rate and never sleeps between nodes.
 */
final class RedlockLock extends HoldingLock {

    private static final Logger log = LoggerFactory.getLogger(RedlockLock.class);
    private static final long JITTER_NANOS = TimeUnit.MILLISECONDS.toNanos(5);
    private static final long FIRST_SPLIT_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    private static final long MAX_SPLIT_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(200);
    private static final long FIRST_UNAVAILABLE_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
    private static final long MAX_UNAVAILABLE_BACKOFF_NANOS = TimeUnit.SECONDS.toNanos(2);

    private final RedlockClient client;
    private final String name;
    private final LockKeys keys;

    RedlockLock(RedlockClient client, String name, LockKeys keys) {
        this.client = client;
        this.name = name;
        this.keys = keys;
    }

    @Override
    public String name() {
        return name;
    }

    // ---- acquiring ------------------------------------------------------------------------

    @Override
    protected LockHandle handleOf(Hold hold) {
        // releaseAfter with a positive delay is refused below, so the delay given here is always 0
        return new HoldHandle((held, delayMillis) -> client.release(held), hold) {
            @Override
            public void releaseAfter(Duration delay) {
                Objects.requireNonNull(delay, "delay");
                if (delay.isNegative() || delay.isZero()) {
                    close();
                    return;
                }
                throw notSupported("LockHandle.releaseAfter(Duration) with a positive delay");
            }
        };
    }

    @Override
    public CompletionStage<LockHandle> acquireAsync() {
        throw notSupported("acquireAsync()");
    }

    @Override
    public CompletionStage<Optional<LockHandle>> tryAcquireAsync(Duration wait) {
        throw notSupported("tryAcquireAsync(Duration)");
    }

    @Override
    public CompletionStage<Optional<LockHandle>> tryAcquireAsync(Duration wait, Duration lease) {
        throw notSupported("tryAcquireAsync(Duration, Duration)");
    }

    private UnsupportedOperationException notSupported(String what) {
        return new UnsupportedOperationException(what + " is not supported by Redlock yet (lock '" + name + "')");
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
            throw new InterruptedException("interrupted before acquiring lock '" + name + "'");
        }
        boolean renewed = leaseMillis == RENEWED;
        long lease = renewed ? client.defaultLeaseMillis() : leaseMillis;
        String owner = client.ownerOfCurrentThread();
        Hold held = client.holds().get(keys.lock(), LockMode.WRITE, owner);
        if (held != null) {
            return reenter(held, lease, renewed);
        }
        long start = System.nanoTime();
        // capped so the deadline arithmetic cannot overflow
        long deadline = start + Math.min(Math.max(0, waitNanos), Long.MAX_VALUE / 2);
        boolean once = !forever && waitNanos <= 0;
        int splits = 0;
        long unavailableBackoff = 0;
        // the failure of the last attempt when fewer than a majority answered, else null
        RedisUnavailableException unavailable = null;
        while (true) {
                client.ensureOpen();
                // taken before the attempt: a release during the attempt still wakes this thread
                CompletableFuture<Void> released = client.signals().expect(keys.lock());
                try {
                    long parkUntil;
                    boolean onSignal;
                    try {
                        Attempt attempt = attempt(owner, lease);
                        if (attempt.acquired()) {
                            return register(owner, attempt, lease, renewed);
                        }
                        unavailableBackoff = 0;
                        unavailable = null;
                        if (once) {
                            return null;
                        }
                        if (attempt.split()) {
                            long cap = Math.min(MAX_SPLIT_BACKOFF_NANOS, FIRST_SPLIT_BACKOFF_NANOS << Math.min(splits++, 5));
                            parkUntil = System.nanoTime() + ThreadLocalRandom.current().nextLong(cap);
                            onSignal = false;
                        } else {
                            splits = 0;
                            parkUntil = System.nanoTime() + attempt.retryNanos();
                            onSignal = true;
                        }
                    } catch (RedisUnavailableException e) {
                        if (once) {
                            throw e;
                        }
                        unavailable = e;
                        unavailableBackoff = unavailableBackoff == 0 ? FIRST_UNAVAILABLE_BACKOFF_NANOS
                                : Math.min(MAX_UNAVAILABLE_BACKOFF_NANOS, unavailableBackoff * 2);
                        log.debug("lock '{}': no majority of Redlock nodes answered, trying again in {} ms: {}",
                                name, TimeUnit.NANOSECONDS.toMillis(unavailableBackoff), e.getMessage());
                        parkUntil = System.nanoTime() + unavailableBackoff;
                        // a release seen on any node, or close(), ends the back-off early
                        onSignal = true;
                    }
                    if (!forever) {
                        if (System.nanoTime() - deadline >= 0) {
                            if (unavailable != null) {
                                throw unavailable;
                            }
                            return null;
                        }
                        parkUntil = deadline - parkUntil < 0 ? deadline : parkUntil;
                    }
                    boolean woken = park(onSignal ? released : new CompletableFuture<>(), parkUntil, interruptible);
                    if (woken && onSignal) {
                        // everybody waiting heard the same release: spread the next attempts
                        long jitterUntil = System.nanoTime() + ThreadLocalRandom.current().nextLong(JITTER_NANOS);
                        park(new CompletableFuture<>(), forever || jitterUntil - deadline < 0 ? jitterUntil : deadline,
                                interruptible);
                    }
                } finally {
                    client.signals().forget(keys.lock(), released);
                }
        }
    }

    /**
     * Parks until {@code signal} completes or {@code untilNanos}; true if signalled.
     *
     * @throws InterruptedException if interruptible and the thread is interrupted; otherwise the
     *     interrupt is kept in the thread's status
     */
    private static boolean park(CompletableFuture<Void> signal, long untilNanos, boolean interruptible)
            throws InterruptedException {
        boolean interrupted = false;
        try {
            while (true) {
                long left = untilNanos - System.nanoTime();
                if (left <= 0) {
                    return signal.isDone();
                }
                try {
                    signal.get(left, TimeUnit.NANOSECONDS);
                    return true;
                } catch (InterruptedException e) {
                    if (interruptible) {
                        throw e;
                    }
                    interrupted = true;
                } catch (TimeoutException e) {
                    return false;
                } catch (ExecutionException e) {
                    return true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * @param split nobody holds a majority: competitors split the nodes, or a holder's keys are
     *     left on a minority only
     * @param retryNanos when a majority of nodes may be free (taken, not split)
     */
    private record Attempt(boolean acquired, long token, long validUntilNanos, boolean split, long retryNanos) {

        static Attempt won(long token, long validUntilNanos) {
            return new Attempt(true, token, validUntilNanos, false, 0);
        }

        static Attempt contended() {
            return new Attempt(false, 0, 0, true, 0);
        }

        static Attempt taken(long retryNanos) {
            return new Attempt(false, 0, 0, false, retryNanos);
        }
    }

    /** One parallel round on every node, then the token write-back; cleans up whatever did not end in a hold. */
    private Attempt attempt(String owner, long lease) {
        long sent = System.nanoTime();
        Poll<List<Object>> poll = client.sendToAllInOrder(RedlockClient.ACQUIRE, ScriptOutputType.MULTI,
                new String[] {keys.lock(), keys.fence()}, reply -> (Long) reply.get(0) == 1L,
                owner, Long.toString(lease));
        poll.awaitDecision(client.timeoutNanos());
        long validUntil = sent + client.drift().validNanos(lease);
        if (poll.won()) {
            long token = 0;
            for (List<Object> reply : poll.answers()) {
                if ((Long) reply.get(0) == 1L) {
                    token = Math.max(token, (Long) reply.get(1));
                }
            }
            Poll<Long> fenced = client.sendToAll(RedlockClient.FENCE, ScriptOutputType.INTEGER,
                    new String[] {keys.lock(), keys.fence()}, written -> true, owner, Long.toString(token));
            fenced.awaitDecision(client.timeoutNanos());
            if (fenced.won() && System.nanoTime() - validUntil < 0) {
                return Attempt.won(token, validUntil);
            }
            client.cleanUp(keys, owner);
            if (!fenced.won()) {
                throw client.unavailable("acquire (fencing token write-back)", name, fenced);
            }
            log.debug("lock '{}': a majority granted it only after its validity ended; trying again", name);
            return Attempt.contended();
        }
        if (poll.yes() > 0 || poll.answered() < client.nodeCount()) {
            // the nodes that granted it, and those whose answer is unknown, may hold it for this owner
            client.cleanUp(keys, owner);
        }
        if (poll.answered() < client.majority()) {
            throw client.unavailable("acquire", name, poll);
        }
        return holderOfMajority(poll.answers()) ? Attempt.taken(retryNanos(poll)) : Attempt.contended();
    }

    /** Whether the nodes that refused name one owner on a majority of all nodes. */
    private boolean holderOfMajority(List<List<Object>> answers) {
        Map<String, Integer> byOwner = new HashMap<>();
        for (List<Object> reply : answers) {
            if ((Long) reply.get(0) == 0L && reply.size() > 2) {
                if (byOwner.merge((String) reply.get(2), 1, Integer::sum) >= client.majority()) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * When enough of the refusing nodes' leases have run out for a majority to be free, plus 1 ms;
     * at most the client's default lease (a key without expiry is waited out by release messages).
     */
    private long retryNanos(Poll<List<Object>> poll) {
        List<Long> leases = new ArrayList<>();
        for (List<Object> reply : poll.answers()) {
            if ((Long) reply.get(0) == 0L) {
                long pttl = (Long) reply.get(1);
                leases.add(pttl < 0 ? Long.MAX_VALUE : pttl);
            }
        }
        leases.sort(null);
        int mustFree = client.majority() - poll.yes();
        long millis = mustFree <= 0 || mustFree > leases.size() ? 0 : leases.get(mustFree - 1);
        long capped = Math.min(millis, client.defaultLeaseMillis()) + 1;
        return TimeUnit.MILLISECONDS.toNanos(capped);
    }

    private Hold register(String owner, Attempt attempt, long lease, boolean renewed) {
        // the Hold's lease end is the validity: its lease start is recorded as sent - drift
        long start = attempt.validUntilNanos() - TimeUnit.MILLISECONDS.toNanos(lease);
        Hold hold = new Hold(name, keys, LockMode.WRITE, owner, attempt.token(), lease, renewed, start);
        client.holds().add(hold);
        if (client.isClosed()) {
            // close() may have released the table before this hold joined it
            client.holds().remove(hold);
            client.cleanUp(keys, owner);
            client.ensureOpen();
        }
        log.debug("lock '{}' acquired on a Redlock majority by {} with fencing token {}", name, owner, attempt.token());
        return hold;
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
        Poll<List<Long>> poll = client.poll(client.sendToEachInOrder(RedlockClient.RENEW, ScriptOutputType.MULTI,
                new String[] {keys.lock()}, held.owner, Long.toString(lease)), codes -> codes.get(0) == 1L);
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
        Hold hold = client.holds().get(keys.lock(), LockMode.WRITE, client.ownerOfCurrentThread());
        if (hold == null) {
            throw new IllegalMonitorStateException("lock '" + name + "' is not held by the current thread ("
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
    public boolean isHeldByCurrentThread() {
        Hold hold = client.holds().get(keys.lock(), LockMode.WRITE, client.ownerOfCurrentThread());
        return hold != null && hold.state() == LeaseState.HELD && !hold.leaseEndedBy(System.nanoTime());
    }

    @Override
    public int getHoldCount() {
        Hold hold = client.holds().get(keys.lock(), LockMode.WRITE, client.ownerOfCurrentThread());
        return hold == null ? 0 : hold.holds();
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
        return "RelockLock[" + name + ", Redlock]";
    }
}
