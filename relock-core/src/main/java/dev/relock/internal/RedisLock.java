package dev.relock.internal;

import dev.relock.LeaseLostException;
import dev.relock.LeaseState;
import dev.relock.LockHandle;
import dev.relock.RedisUnavailableException;
import dev.relock.RelockException;
import dev.relock.RelockLock;
import dev.relock.internal.script.LuaScript;
import io.lettuce.core.ScriptOutputType;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One mode of a lock: the exclusive lock and the write half of a read-write lock are the WRITE
 * mode of a name, the read half is its READ mode (see {@link RelockLock} for the contract,
 * queue.lua for the state in Redis).
 *
 * <p>Design notes. The object is a stateless view: holds live in the client's {@link HoldTable},
 * so two {@code RedisLock}s of one name and mode agree. Re-entries are counted in Redis as well as
 * here (a re-entry costs one round trip and proves the lease is still there). A waiting thread
 * joins the lock's FIFO queue in Redis and parks on a {@link Waiter}; it is woken by a message
 * naming it when its turn comes, or wakes by itself when the holder's lease would run out or its
 * own wait ends. It never polls at a fixed rate.
 *
 * <p>Ambiguity: an attempt whose reply times out may still be applied by Redis. The attempt is
 * then followed, on the same connection and so in order, by withdraw.lua, which undoes a fresh
 * acquisition and leaves the queue; nothing ownerless lingers until its lease runs out.
 */
final class RedisLock implements RelockLock {

    private static final Logger log = LoggerFactory.getLogger(RedisLock.class);
    private static final long RENEWED = 0;
    // what a waiter without a deadline tells acquire.lua it will wait: its queue entry then lives
    // as long as the retry hint, which it refreshes
    private static final long WAIT_FOREVER_MILLIS = TimeUnit.DAYS.toMillis(1);
    private static final long MAX_BACKOFF_NANOS = TimeUnit.SECONDS.toNanos(2);
    private static final long FIRST_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    private final LettuceRelockClient client;
    private final String name;
    private final LockKeys keys;
    private final LockMode mode;

    RedisLock(LettuceRelockClient client, String name, LockKeys keys, LockMode mode) {
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
    public void lock() {
        acquireUninterruptibly(RENEWED);
    }

    @Override
    public void lock(long lease, TimeUnit unit) {
        acquireUninterruptibly(leaseMillis(lease, unit));
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        acquire(Long.MAX_VALUE, true, RENEWED, true);
    }

    @Override
    public boolean tryLock() {
        try {
            return acquire(0, false, RENEWED, false) != null;
        } catch (InterruptedException e) {
            throw new AssertionError("a single attempt does not park", e);
        }
    }

    @Override
    public boolean tryLock(long wait, TimeUnit unit) throws InterruptedException {
        Objects.requireNonNull(unit, "unit");
        return acquire(unit.toNanos(wait), false, RENEWED, true) != null;
    }

    @Override
    public boolean tryLock(long wait, long lease, TimeUnit unit) throws InterruptedException {
        Objects.requireNonNull(unit, "unit");
        return acquire(unit.toNanos(wait), false, leaseMillis(lease, unit), true) != null;
    }

    @Override
    public LockHandle acquire() {
        return new HoldHandle(this, acquireUninterruptibly(RENEWED));
    }

    @Override
    public Optional<LockHandle> tryAcquire(Duration wait) throws InterruptedException {
        Objects.requireNonNull(wait, "wait");
        return handle(acquire(saturatedNanos(wait), false, RENEWED, true));
    }

    @Override
    public Optional<LockHandle> tryAcquire(Duration wait, Duration lease) throws InterruptedException {
        Objects.requireNonNull(wait, "wait");
        Objects.requireNonNull(lease, "lease");
        long leaseMillis = leaseMillis(saturatedNanos(lease), TimeUnit.NANOSECONDS);
        return handle(acquire(saturatedNanos(wait), false, leaseMillis, true));
    }

    private Optional<LockHandle> handle(Hold hold) {
        return hold == null ? Optional.empty() : Optional.of(new HoldHandle(this, hold));
    }

    private Hold acquireUninterruptibly(long leaseMillis) {
        try {
            return acquire(Long.MAX_VALUE, true, leaseMillis, false);
        } catch (InterruptedException e) {
            throw new AssertionError("an uninterruptible wait does not throw InterruptedException", e);
        }
    }

    /**
     * Acquires or re-enters the lock for the current thread.
     *
     * @param waitNanos how long to wait; zero or less tries once without queueing
     * @param forever wait without a deadline, retrying Redis failures with back-off
     * @param leaseMillis an explicit lease, or {@link #RENEWED} for the client's renewed lease
     * @return the hold, or null if the wait ended first
     */
    private Hold acquire(long waitNanos, boolean forever, long leaseMillis, boolean interruptible)
            throws InterruptedException {
        client.ensureOpen();
        if (interruptible && Thread.interrupted()) {
            throw new InterruptedException("interrupted before acquiring lock '" + name + "'");
        }
        boolean renewed = leaseMillis == RENEWED;
        long lease = renewed ? client.defaultLeaseMillis() : leaseMillis;
        String owner = client.ownerOfCurrentThread();
        Hold held = client.holds().get(keys.lock(), mode, owner);
        if (held != null) {
            return reenter(held, lease, renewed);
        }
        if (mode == LockMode.WRITE && client.holds().get(keys.lock(), LockMode.READ, owner) != null) {
            throw upgradeRefused();
        }
        long start = System.nanoTime();
        if (!forever && waitNanos <= 0) {
            Attempt attempt = attempt(owner, lease, 0);
            return attempt.acquired() ? register(owner, attempt, lease, renewed) : null;
        }
        // capped so the deadline arithmetic cannot overflow; 146 years is forever enough
        long deadline = start + Math.min(waitNanos, Long.MAX_VALUE / 2);
        Waiter waiter = client.waitingRoom().enter(owner, keys, mode);
        boolean interrupted = false;
        long backoff = 0;
        try {
            while (true) {
                waiter.reset();
                // after reset(): a close() from now on leaves its wake-up in the waiter (and
                // withdraws it from the queue)
                client.ensureOpen();
                long now = System.nanoTime();
                long parkUntil;
                try {
                    long waitMillis = forever ? WAIT_FOREVER_MILLIS : Math.max(1, ceilMillis(deadline - now));
                    Attempt attempt = attempt(owner, lease, waitMillis);
                    if (attempt.acquired()) {
                        return register(owner, attempt, lease, renewed);
                    }
                    backoff = 0;
                    // +1 ms: wake just after the holder's lease has run out in Redis
                    parkUntil = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(attempt.retryMillis() + 1);
                } catch (RedisUnavailableException e) {
                    if (!forever) {
                        throw e;
                    }
                    backoff = backoff == 0 ? FIRST_BACKOFF_NANOS : Math.min(MAX_BACKOFF_NANOS, backoff * 2);
                    log.debug("lock '{}': Redis unavailable, trying again in {} ms: {}",
                            name, TimeUnit.NANOSECONDS.toMillis(backoff), e.getMessage());
                    parkUntil = System.nanoTime() + backoff;
                }
                if (!forever) {
                    if (System.nanoTime() - deadline >= 0) {
                        withdraw(owner, false);
                        return null;
                    }
                    parkUntil = deadline - parkUntil < 0 ? deadline : parkUntil;
                }
                try {
                    waiter.await(parkUntil);
                } catch (InterruptedException e) {
                    if (interruptible) {
                        withdraw(owner, false);
                        throw e;
                    }
                    interrupted = true;
                }
            }
        } finally {
            client.waitingRoom().leave(owner, waiter);
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private Hold reenter(Hold held, long lease, boolean renewed) {
        if (held.state() == LeaseState.LOST) {
            throw new LeaseLostException(name, held.lostReason() + "; unlock() the earlier holds first");
        }
        long sent = System.nanoTime();
        List<Long> reply = client.calls().await(
                client.calls().run(mode.acquire, ScriptOutputType.MULTI, keys.all(),
                        held.owner, Long.toString(lease), "1", "0", client.graceMillis(), client.wakeChannelPrefix()),
                "re-entry", name);
        if (reply.get(0) < 0) {
            client.reportLost(held, "Redis no longer had it at re-entry (key expired, deleted or forced open)");
            throw new LeaseLostException(name, held.lostReason() + "; unlock() the earlier holds first");
        }
        held.reenter(lease, renewed, sent);
        return held;
    }

    private record Attempt(boolean acquired, long token, long retryMillis, long sentNanos) {}

    private Attempt attempt(String owner, long lease, long waitMillis) {
        long sent = System.nanoTime();
        CompletableFuture<List<Long>> reply = client.calls().run(
                mode.acquire, ScriptOutputType.MULTI, keys.all(),
                owner, Long.toString(lease), "0", Long.toString(waitMillis),
                client.graceMillis(), client.wakeChannelPrefix());
        List<Long> result;
        try {
            result = client.calls().await(reply, "acquire", name);
        } catch (RedisUnavailableException e) {
            // the attempt may still be applied; undo it in order on the same connection
            withdraw(owner, true);
            throw e;
        }
        if (result.get(0) == -2) {
            throw upgradeRefused();
        }
        return result.get(0) == 1
                ? new Attempt(true, result.get(1), 0, sent)
                : new Attempt(false, 0, result.get(1), sent);
    }

    private Hold register(String owner, Attempt attempt, long lease, boolean renewed) {
        Hold hold = new Hold(name, keys, mode, owner, attempt.token(), lease, renewed, attempt.sentNanos());
        client.holds().add(hold);
        if (client.isClosed()) {
            // close() may have released the table before this hold joined it
            client.holds().remove(hold);
            client.calls().runInOrder(mode.release, ScriptOutputType.INTEGER, keys.all(),
                    owner, "all", client.graceMillis(), client.wakeChannelPrefix());
            client.ensureOpen();
        }
        log.debug("{} '{}' acquired by {} with fencing token {}", mode.description, name, owner, attempt.token());
        return hold;
    }

    /** Leaves the queue (and undoes a fresh hold whose reply was lost), without waiting for the reply. */
    private void withdraw(String owner, boolean undoFreshHold) {
        if (client.isClosed()) {
            // close() withdraws the waiters itself, before it closes the connection
            return;
        }
        client.calls().<Long>runInOrder(LuaScript.WITHDRAW, ScriptOutputType.INTEGER, keys.all(),
                        owner, mode.kind, undoFreshHold ? "1" : "0", client.graceMillis(), client.wakeChannelPrefix())
                .whenComplete((undone, error) -> {
                    if (error != null) {
                        log.debug("lock '{}': withdrawing {} failed; its queue entry expires by itself: {}",
                                name, owner, error.toString());
                    }
                });
    }

    // ---- releasing ------------------------------------------------------------------------

    @Override
    public void unlock() {
        client.ensureOpen();
        Hold hold = client.holds().get(keys.lock(), mode, client.ownerOfCurrentThread());
        if (hold == null) {
            throw new IllegalMonitorStateException(what() + " is not held by the current thread ("
                    + Thread.currentThread().getName() + ")");
        }
        release(hold);
    }

    /** Gives up one hold, from whatever thread (handles may be closed anywhere). */
    void release(Hold hold) {
        client.ensureOpen();
        if (hold.state() == LeaseState.LOST) {
            if (hold.drop() == 0) {
                client.holds().remove(hold);
                // clean up in case the key outlived the local view of the lease; owner-checked, and
                // in order, so it cannot overtake this thread's next acquisition
                client.calls().runInOrder(mode.release, ScriptOutputType.INTEGER, keys.all(),
                        hold.owner, "all", client.graceMillis(), client.wakeChannelPrefix());
            }
            throw new LeaseLostException(name, hold.lostReason());
        }
        boolean last = hold.holds() <= 1;
        if (last) {
            hold.beginRelease();
        }
        long left;
        try {
            // the last local hold drops every hold in Redis, so a re-entry whose reply was lost
            // cannot keep the lock alive
            left = client.calls().await(sendRelease(hold, last ? "all" : "one"), "release", name);
        } catch (RelockException e) {
            if (last) {
                // stop renewing: the lease runs out in Redis by itself
                client.holds().remove(hold);
                hold.released();
            }
            throw e;
        }
        if (left < 0) {
            client.reportLost(hold, "Redis no longer had it at release (lease ran out, key deleted or forced open)");
            if (hold.drop() == 0) {
                client.holds().remove(hold);
            }
            throw new LeaseLostException(name, hold.lostReason());
        }
        if (last) {
            client.holds().remove(hold);
            hold.drop();
            hold.released();
            log.debug("{} '{}' released by {}", mode.description, name, hold.owner);
        } else {
            hold.drop();
        }
    }

    private CompletableFuture<Long> sendRelease(Hold hold, String mode) {
        return client.calls().run(this.mode.release, ScriptOutputType.INTEGER, keys.all(),
                hold.owner, mode, client.graceMillis(), client.wakeChannelPrefix());
    }

    @Override
    public boolean forceUnlock() {
        client.ensureOpen();
        long deleted = client.calls().await(
                client.calls().<Long>run(LuaScript.FORCE_UNLOCK, ScriptOutputType.INTEGER, keys.all(),
                        client.graceMillis(), client.wakeChannelPrefix()),
                "force-unlock", name);
        if (deleted == 1) {
            log.info("lock '{}' was forced open by client {}", name, client.clientId());
        }
        return deleted == 1;
    }

    // ---- inspecting -----------------------------------------------------------------------

    @Override
    public boolean isLocked() {
        client.ensureOpen();
        return client.calls().await(client.calls().commands().exists(keys.lock()), "isLocked", name) == 1;
    }

    @Override
    public boolean isHeldByCurrentThread() {
        Hold hold = client.holds().get(keys.lock(), mode, client.ownerOfCurrentThread());
        // an explicit lease may have run out before the lease keeper's next pass noticed
        return hold != null && hold.state() == LeaseState.HELD && !hold.leaseEndedBy(System.nanoTime());
    }

    @Override
    public int getHoldCount() {
        Hold hold = client.holds().get(keys.lock(), mode, client.ownerOfCurrentThread());
        return hold == null ? 0 : hold.holds();
    }

    @Override
    public Optional<Duration> remainingLease() {
        client.ensureOpen();
        long pttl = client.calls().await(client.calls().commands().pttl(keys.lock()), "remainingLease", name);
        return pttl < 0 ? Optional.empty() : Optional.of(Duration.ofMillis(pttl));
    }

    @Override
    public OptionalLong fencingToken() {
        long token = client.inspect(name).fencingToken();
        return token == 0 ? OptionalLong.empty() : OptionalLong.of(token);
    }

    // ---- arguments ------------------------------------------------------------------------

    private IllegalMonitorStateException upgradeRefused() {
        return new IllegalMonitorStateException("the current thread holds the read lock of '" + name
                + "' and asks for its write lock: upgrading would deadlock with any other reader doing the same;"
                + " release the read lock first");
    }

    private String what() {
        return mode == LockMode.WRITE ? "lock '" + name + "'" : "read lock '" + name + "'";
    }

    private long leaseMillis(long lease, TimeUnit unit) {
        Objects.requireNonNull(unit, "unit");
        if (lease <= 0) {
            throw new IllegalArgumentException("lease of lock '" + name + "' must be positive: " + lease + " " + unit);
        }
        return Math.max(1, unit.toMillis(lease));
    }

    private static long saturatedNanos(Duration duration) {
        try {
            return duration.toNanos();
        } catch (ArithmeticException e) {
            return duration.isNegative() ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
    }

    private static long ceilMillis(long nanos) {
        return (nanos + 999_999) / 1_000_000;
    }

    @Override
    public String toString() {
        return "RelockLock[" + name + (mode == LockMode.READ ? ", read" : "") + "]";
    }
}
