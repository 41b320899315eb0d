package dev.relock.internal.single;

import dev.relock.PermitHandle;
import dev.relock.RelockSemaphore;
import dev.relock.internal.engine.Durations;
import dev.relock.internal.engine.EngineClient;
import dev.relock.internal.engine.EngineLock;
import dev.relock.internal.engine.Hold;
import dev.relock.internal.engine.HoldHandle;
import dev.relock.internal.engine.LockKeys;
import dev.relock.internal.engine.LockMode;
import dev.relock.internal.script.SingleServerScripts;
import io.lettuce.core.ScriptOutputType;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * A semaphore with leased permits (see {@link RelockSemaphore}; the state in Redis is described in
 * queue.lua). Stateless view like {@link EngineLock}; every acquisition has a holder id of its own,
 * so handles are not tied to threads.
 */
final class RedisSemaphore implements RelockSemaphore {

    // permits-acquire.lua's count for "every permit free now"
    private static final String ALL_FREE = "all";

    private final SingleServerEngine engine;
    private final String name;
    private final LockKeys keys;

    RedisSemaphore(SingleServerEngine engine, String name, LockKeys keys) {
        this.engine = engine;
        this.name = name;
        this.keys = keys;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public boolean trySetPermits(int permits) {
        if (permits < 0) {
            throw new IllegalArgumentException("permits of semaphore '" + name + "' must not be negative: " + permits);
        }
        return change("set", permits) == 1;
    }

    @Override
    public int addPermits(int delta) {
        long total = change("add", delta);
        if (total == -3) {
            throw notSet();
        }
        if (total == -1) {
            throw new IllegalStateException("semaphore '" + name + "' cannot lose " + -delta
                    + " permits: it would have fewer than none");
        }
        return (int) total;
    }

    @Override
    public int availablePermits() {
        long available = admin("available");
        // -3 is also a real count (permits taken away while held): only a semaphore never set has none
        return available == -3 && !isSet() ? 0 : (int) available;
    }

    @Override
    public PermitHandle acquire(int permits) throws InterruptedException {
        return acquire(permits, 0, true, EngineClient.RENEWED);
    }

    @Override
    public Optional<PermitHandle> tryAcquire(int permits, Duration wait) throws InterruptedException {
        Objects.requireNonNull(wait, "wait");
        return Optional.ofNullable(acquire(permits, Durations.saturatedNanos(wait), false, EngineClient.RENEWED));
    }

    @Override
    public Optional<PermitHandle> tryAcquire(int permits, Duration wait, Duration lease) throws InterruptedException {
        Objects.requireNonNull(wait, "wait");
        return Optional.ofNullable(acquire(permits, Durations.saturatedNanos(wait), false, explicitLeaseMillis(lease)));
    }

    /**
     * One attempt without a wait, asking permits-acquire.lua for every free permit: it takes them for a holder of its
     * own in the script that counts them, so no acquisition or change of the number comes between the count and the
     * taking, and it skips the queue no more than any attempt without a wait does.
     */
    @Override
    public Optional<PermitHandle> drainPermits() {
        Acquisition drain = acquisition(ALL_FREE, EngineClient.RENEWED);
        Hold hold;
        try {
            hold = drain.run(0, false, false);
        } catch (InterruptedException e) {
            throw new AssertionError("an uninterruptible attempt does not throw InterruptedException", e);
        }
        return hold == null ? Optional.empty() : Optional.of(new Permits(engine, hold, drain.permitsTaken()));
    }

    @Override
    public CompletionStage<PermitHandle> acquireAsync(int permits) {
        return acquisition(permits, EngineClient.RENEWED)
                .startAsync(Long.MAX_VALUE, true, hold -> new Permits(engine, hold, permits), null);
    }

    @Override
    public CompletionStage<Optional<PermitHandle>> tryAcquireAsync(int permits, Duration wait) {
        Objects.requireNonNull(wait, "wait");
        return tryAcquireAsync(permits, wait, EngineClient.RENEWED);
    }

    @Override
    public CompletionStage<Optional<PermitHandle>> tryAcquireAsync(int permits, Duration wait, Duration lease) {
        Objects.requireNonNull(wait, "wait");
        return tryAcquireAsync(permits, wait, explicitLeaseMillis(lease));
    }

    private CompletionStage<Optional<PermitHandle>> tryAcquireAsync(int permits, Duration wait, long leaseMillis) {
        return acquisition(permits, leaseMillis).startAsync(Durations.saturatedNanos(wait), false,
                hold -> Optional.of(new Permits(engine, hold, permits)), Optional.empty());
    }

    /** @param leaseMillis an explicit lease, or {@link EngineClient#RENEWED} */
    private PermitHandle acquire(int permits, long waitNanos, boolean forever, long leaseMillis)
            throws InterruptedException {
        Acquisition acquisition = acquisition(permits, leaseMillis);
        if (Thread.interrupted()) {
            throw new InterruptedException("interrupted before acquiring permits of semaphore '" + name + "'");
        }
        Hold hold = acquisition.run(waitNanos, forever, true);
        return hold == null ? null : new Permits(engine, hold, permits);
    }

    /** A fresh acquisition with a holder id of its own, after checking the arguments. */
    private Acquisition acquisition(int permits, long leaseMillis) {
        if (permits <= 0) {
            throw new IllegalArgumentException("permits to acquire from semaphore '" + name
                    + "' must be positive: " + permits);
        }
        return acquisition(Integer.toString(permits), leaseMillis);
    }

    /** A fresh acquisition of {@code permits} (a number, or {@link #ALL_FREE}) with a holder id of its own. */
    private Acquisition acquisition(String permits, long leaseMillis) {
        engine.core.ensureOpen();
        boolean renewed = leaseMillis == EngineClient.RENEWED;
        long lease = renewed ? engine.core.defaultLeaseMillis() : leaseMillis;
        return new Acquisition(engine, name, keys, LockMode.PERMITS, engine.core.newHolderId(), lease, renewed,
                new String[] {permits}, code -> {
                    if (code == -3) {
                        return notSet();
                    }
                    if (code == -4) {
                        return new IllegalArgumentException("semaphore '" + name + "' has fewer than " + permits
                                + " permits in all; asking for them would wait forever");
                    }
                    return new IllegalStateException("semaphore '" + name + "': unexpected reply " + code);
                });
    }

    private long explicitLeaseMillis(Duration lease) {
        Objects.requireNonNull(lease, "lease");
        if (lease.isZero() || lease.isNegative()) {
            throw new IllegalArgumentException("lease of semaphore '" + name + "' must be positive: " + lease);
        }
        return Math.max(1, lease.toMillis());
    }

    /** permits-admin.lua's 'set' or 'add', which may let waiters in. */
    private long change(String operation, long number) {
        return admin(operation, Long.toString(number), engine.graceMillis(), engine.routes().wakeRoute(keys));
    }

    /** Runs permits-admin.lua; {@code args[0]} is the operation. */
    private long admin(String... args) {
        engine.core.ensureOpen();
        return engine.calls().await(engine.calls().<Long>run(SingleServerScripts.PERMITS_ADMIN,
                ScriptOutputType.INTEGER, keys.all(), args), args[0] + " permits", name);
    }

    private boolean isSet() {
        return engine.calls().await(engine.calls().commands().hexists(keys.lock(), "~limit"), "permits", name);
    }

    private IllegalStateException notSet() {
        return new IllegalStateException("semaphore '" + name + "' has no number of permits set; call trySetPermits first");
    }

    @Override
    public String toString() {
        return "RelockSemaphore[" + name + "]";
    }

    /** The permits of one acquisition. */
    private static final class Permits extends HoldHandle implements PermitHandle {

        private final int permits;

        Permits(SingleServerEngine engine, Hold hold, int permits) {
            super(engine, hold);
            this.permits = permits;
        }

        @Override
        public int permits() {
            return permits;
        }
    }
}
