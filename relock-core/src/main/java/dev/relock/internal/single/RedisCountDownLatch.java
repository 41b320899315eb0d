package dev.relock.internal.single;

import dev.relock.LatchInfo;
import dev.relock.RelockCountDownLatch;
import dev.relock.RelockException;
import dev.relock.internal.engine.Durations;
import dev.relock.internal.script.SingleServerScripts;
import io.lettuce.core.ScriptOutputType;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * A count-down latch on one Redis (see {@link RelockCountDownLatch}; the state in Redis is described in latch.lua).
 * Stateless view: any number may exist for one name, and every thread may use one.
 *
 * <p>A wait is a {@link LatchAwait}, which blocks no thread: {@link #awaitAsync} returns its result, and the blocking
 * awaits wait for that result in the calling thread.
 */
final class RedisCountDownLatch implements RelockCountDownLatch {

    /** How long latch.lua keeps the ids of an earlier round's count-downs, for one sent again after a reconnect. */
    static final long RESENT_WITHIN_MILLIS = TimeUnit.MINUTES.toMillis(10);
    /** The largest count: Redis scripts count in doubles, exact up to 2^53. */
    static final long MAX_COUNT = (1L << 53) - 1;

    private final SingleServerEngine engine;
    private final String name;
    private final String key;

    RedisCountDownLatch(SingleServerEngine engine, String name, String key) {
        this.engine = engine;
        this.name = name;
        this.key = key;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public boolean trySetCount(long count) {
        return trySetCount(count, DEFAULT_IDLE_EXPIRY);
    }

    @Override
    public boolean trySetCount(long count, Duration idleExpiry) {
        Objects.requireNonNull(idleExpiry, "idleExpiry");
        if (count <= 0 || count > MAX_COUNT) {
            throw new IllegalArgumentException("count of count-down latch '" + name + "' must be between 1 and "
                    + MAX_COUNT + ": " + count);
        }
        if (idleExpiry.toNanos() < TimeUnit.MILLISECONDS.toNanos(1)) {
            throw new IllegalArgumentException("idle expiry of count-down latch '" + name
                    + "' must be at least a millisecond: " + idleExpiry);
        }
        long idleMillis = Durations.saturatedNanos(idleExpiry) / 1_000_000;
        long set = script("set", Long.toString(count), Long.toString(idleMillis), engine.core.newHolderId(),
                Long.toString(RESENT_WITHIN_MILLIS));
        return set == 1;
    }

    @Override
    public long countDown() {
        return script("down", engine.core.newHolderId(), engine.routes().wakeRoute(key));
    }

    @Override
    public long getCount() {
        engine.core.ensureOpen();
        String count = engine.calls().await(engine.calls().commands().hget(key, "count"), "count of count-down latch '" + name + "'", null);
        return count == null ? 0 : Long.parseLong(count);
    }

    @Override
    public void await() throws InterruptedException {
        await(0, true);
    }

    @Override
    public boolean await(long timeout, TimeUnit unit) throws InterruptedException {
        Objects.requireNonNull(unit, "unit");
        return await(unit.toNanos(timeout), false);
    }

    @Override
    public boolean await(Duration timeout) throws InterruptedException {
        Objects.requireNonNull(timeout, "timeout");
        return await(Durations.saturatedNanos(timeout), false);
    }

    @Override
    public LatchInfo inspect() {
        List<Object> reply = read("info");
        List<String> waiting = new ArrayList<>();
        for (int i = 3; i < reply.size(); i++) {
            waiting.add((String) reply.get(i));
        }
        waiting.sort(null);
        long pttl = (Long) reply.get(2);
        return new LatchInfo(name, (Long) reply.get(0), pttl != -2, Duration.ofMillis(Math.max(0, pttl)), waiting);
    }

    @Override
    public CompletionStage<Boolean> awaitAsync(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        return LatchAwait.start(engine, this, key, Durations.saturatedNanos(timeout), false).result();
    }

    /** Waits in the calling thread for a {@link LatchAwait}; an interrupt stops it before this throws. */
    private boolean await(long waitNanos, boolean forever) throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException("interrupted before waiting for count-down latch '" + name + "'");
        }
        LatchAwait wait = LatchAwait.start(engine, this, key, waitNanos, forever);
        try {
            return wait.result().get();
        } catch (InterruptedException e) {
            // over when this returns: the wait has left the client's waits
            wait.stop("interrupted");
            throw new InterruptedException("interrupted while waiting for count-down latch '" + name + "'");
        } catch (ExecutionException e) {
            throw SerialWait.rethrown(e.getCause());
        }
    }

    private long script(String... args) {
        engine.core.ensureOpen();
        return engine.calls().await(engine.calls().<Long>run(SingleServerScripts.LATCH, ScriptOutputType.INTEGER,
                new String[] {key}, args), args[0] + " of count-down latch '" + name + "'", null);
    }

    /** latch.lua 'info'. */
    private List<Object> read(String operation) {
        engine.core.ensureOpen();
        return engine.calls().await(engine.calls().<List<Object>>run(SingleServerScripts.LATCH, ScriptOutputType.MULTI,
                new String[] {key}, operation), operation + " of count-down latch '" + name + "'", null);
    }

    /**
     * latch.lua 'wait', which lists this client as waiting while the count is above zero, without waiting: fails with
     * the {@link RelockException} a blocking call would throw, no later than the command timeout. Any thread but an
     * I/O thread.
     */
    CompletableFuture<List<Object>> readAsync(String operation) {
        return engine.calls().within(engine.calls().<List<Object>>run(SingleServerScripts.LATCH, ScriptOutputType.MULTI,
                new String[] {key}, operation, engine.core.clientId()),
                operation + " of count-down latch '" + name + "'", null);
    }

    @Override
    public String toString() {
        return "RelockCountDownLatch[" + name + "]";
    }
}
