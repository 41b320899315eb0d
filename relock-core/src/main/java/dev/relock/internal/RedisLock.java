package dev.relock.internal;

import dev.relock.LeaseLostException;
import dev.relock.LeaseState;
import dev.relock.LockHandle;
import dev.relock.RelockLock;
import dev.relock.internal.script.LuaScript;
import io.lettuce.core.ScriptOutputType;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One mode of a lock: the exclusive lock and the write half of a read-write lock are the WRITE
 * mode of a name, the read half is its READ mode (see {@link RelockLock} for the contract,
 * queue.lua for the state in Redis).
 *
 * <p>Design notes. The object is a stateless view: holds live in the client's {@link HoldTable},
 * so two {@code RedisLock}s of one name and mode agree. Fresh acquisitions (and their waiting)
 * are an {@link Acquisition}. Re-entries are counted in Redis as well as here (a re-entry costs
 * one round trip and proves the lease is still there). The count here is the truth: every script
 * writes the count it is given (the owner's count here, plus or less one), never increments what
 * Redis has, so a script that ran twice or whose reply was lost changes nothing a retry or the next
 * call does not set right, and a failed {@code unlock()} may simply be called again.
 */
final class RedisLock extends HoldingLock {

    private static final Logger log = LoggerFactory.getLogger(RedisLock.class);
    private static final String[] NO_EXTRA_ARGS = {};

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

    LockKeys keys() {
        return keys;
    }

    // ---- acquiring ------------------------------------------------------------------------

    @Override
    protected LockHandle handleOf(Hold hold) {
        return new HoldHandle(client, hold);
    }

    /**
     * Acquires or re-enters the lock for the current thread.
     *
     * @param waitNanos how long to wait; zero or less tries once without queueing
     * @param forever wait without a deadline, retrying Redis failures with back-off
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
        Hold held = client.holds().get(keys, mode, owner);
        if (held != null) {
            return reenter(held, lease, renewed);
        }
        if (mode == LockMode.WRITE && client.holds().get(keys, LockMode.READ, owner) != null) {
            throw upgradeRefused(name);
        }
        return acquisition(owner, lease, renewed).run(waitNanos, forever, interruptible);
    }

    private Acquisition acquisition(String owner, long lease, boolean renewed) {
        // an upgrade is refused before anything is sent (acquire), so the scripts refuse nothing here
        return new Acquisition(client, name, keys, mode, owner, lease, renewed, NO_EXTRA_ARGS,
                code -> new IllegalStateException(mode.description + " '" + name + "': unexpected reply " + code));
    }

    // ---- acquiring for a handle ------------------------------------------------------------

    @Override
    protected Acquisition handleOwned(long leaseMillis) {
        client.ensureOpen();
        boolean renewed = leaseMillis == RENEWED;
        return acquisition(client.newHolderId(), renewed ? client.defaultLeaseMillis() : leaseMillis, renewed);
    }

    private Hold reenter(Hold held, long lease, boolean renewed) {
        if (held.state() == LeaseState.LOST) {
            throw new LeaseLostException(name, held.lostReason() + "; unlock() the earlier holds first");
        }
        long sent = System.nanoTime();
        List<Long> reply = client.calls().await(IoThreads.offIo(client.timer(),
                () -> client.calls().<List<Long>>run(mode.acquire, ScriptOutputType.MULTI, keys.all(),
                        held.owner, Long.toString(lease), Integer.toString(held.holds()), "0", client.graceMillis(),
                        client.wakeRoute(keys))),
                "re-entry", name);
        if (reply.get(0) < 0) {
            client.reportLost(held, "Redis no longer had it at re-entry (key expired, deleted or forced open)");
            throw new LeaseLostException(name, held.lostReason() + "; unlock() the earlier holds first");
        }
        if (held.state() == LeaseState.LOST) {
            // told lost while the re-entry was on its way (its deadline passed): the hold is being released by
            // owner, whatever Redis said; the re-entry's count in Redis goes with it
            throw new LeaseLostException(name, held.lostReason() + "; unlock() the earlier holds first");
        }
        held.reenter(lease, renewed, sent);
        return held;
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
        long deleted = client.calls().await(
                client.calls().<Long>run(LuaScript.FORCE_UNLOCK, ScriptOutputType.INTEGER, keys.all(),
                        client.graceMillis(), client.wakeRoute(keys)),
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
    protected Hold currentThreadsHold() {
        return client.holds().get(keys, mode, client.ownerOfCurrentThread());
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

    @Override
    public String toString() {
        return "RelockLock[" + name + (mode == LockMode.READ ? ", read" : "") + "]";
    }
}
