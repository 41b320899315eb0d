package dev.relock.internal.redis;

import dev.relock.RedisUnavailableException;
import dev.relock.RelockException;
import dev.relock.ReplicationGuard;
import dev.relock.internal.script.LuaScript;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.ArrayOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.ProtocolKeyword;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends commands on the client's one multiplexed connection and turns their replies into values
 * or {@link RelockException}s that name the lock and the operation: scripts go out and are sent
 * again as {@link ScriptCalls} says, and failures are read and mapped by {@link RedisFailures}.
 * Waits are read on the client's ticker.
 *
 * <p>The connection is a standalone one or a Redis Cluster one, through the commands both have
 * ({@link RedisClusterAsyncCommands}). On Cluster, Lettuce sends a script to the master of its
 * first key's slot, follows MOVED and ASK redirections itself, and iterates SCAN over every
 * master; every script relock sends has keys of one slot only.
 *
 * <p>Everything here is asynchronous except {@link #await}, which blocks the calling thread for at
 * most the command timeout. Commands sent from one thread reach Redis in the order they were sent
 * (on Cluster: those for one slot, while no redirection sends one of them elsewhere).
 * Thread-safe.
 *
 * <p>Public because both engines, each in a package of its own, send their scripts through it.
 */
public final class RedisCalls {

    private static final Logger log = LoggerFactory.getLogger(RedisCalls.class);

    /** WAITAOF (Redis 7.2) is not among Lettuce's commands (6.8). */
    private static final ProtocolKeyword WAITAOF = new ProtocolKeyword() {
        private final byte[] bytes = "WAITAOF".getBytes(StandardCharsets.US_ASCII);

        @Override
        public byte[] getBytes() {
            return bytes;
        }

        // ProtocolKeyword.name() since Lettuce 6.7; no @Override, so the class also compiles against 6.6 (Boot 3.5)
        public String name() {
            return "WAITAOF";
        }
    };

    private final RedisClusterAsyncCommands<String, String> commands;
    private final long timeoutNanos;
    private final String address;
    private final ScheduledExecutorService timer;
    private final boolean lettuceTimesOut;
    private final LongSupplier ticker;
    private final ScriptCalls scripts;

    /**
     * @param timer runs the time limit of {@link #runTimed} when Lettuce does not, and the resends
     *     after TRYAGAIN
     * @param lettuceTimesOut whether Lettuce itself fails every command after {@code timeout}
     * @param ticker the client's ticker ({@code EngineClient.ticker()}, as {@code ticker::nanoTime}: this package
     *     stays below the engine's), on which the waits and the resends' time limit are read
     */
    public RedisCalls(StatefulConnection<String, String> connection, RedisClusterAsyncCommands<String, String> commands,
            Duration timeout, String address, ScheduledExecutorService timer, boolean lettuceTimesOut,
            LongSupplier ticker) {
        this.commands = commands;
        this.timeoutNanos = timeout.toNanos();
        this.address = address;
        this.timer = timer;
        this.lettuceTimesOut = lettuceTimesOut;
        this.ticker = ticker;
        this.scripts = new ScriptCalls(connection, commands, timeoutNanos, timer, ticker);
    }

    public RedisClusterAsyncCommands<String, String> commands() {
        return commands;
    }

    public String address() {
        return address;
    }

    /** The command timeout, in ns: the longest {@link #await} waits. */
    public long timeoutNanos() {
        return timeoutNanos;
    }

    /**
     * Sends the guard's {@code WAIT replicas timeout}: the reply counts the replicas that
     * acknowledged every write this connection sent before it. Redis answers nothing else on this
     * connection meanwhile. For a {@link ReplicationGuard#fsynced() fsynced} guard it sends
     * {@code WAITAOF 1 replicas timeout} instead (Redis 7.2; the client checked at connect that the
     * server has it), which answers [master fsynced 0 or 1, replicas fsynced]: the count of
     * replicas that fsynced, or 0 when the master did not.
     */
    public CompletableFuture<Long> awaitReplicas(ReplicationGuard guard) {
        long timeoutMillis = guard.timeout().toMillis();
        if (!guard.fsynced()) {
            return commands.waitForReplication(guard.replicas(), timeoutMillis).toCompletableFuture();
        }
        CommandArgs<String, String> args = new CommandArgs<>(StringCodec.UTF8)
                .add(1).add(guard.replicas()).add(timeoutMillis);
        return commands.dispatch(WAITAOF, new ArrayOutput<>(StringCodec.UTF8), args).toCompletableFuture()
                .thenApply(reply -> (Long) reply.get(0) < 1 ? 0L : (Long) reply.get(1));
    }

    /**
     * Runs a script by EVALSHA; after NOSCRIPT (script cache flushed, server restarted, a Cluster
     * slot now served by another node) by EVAL, which reloads it. The EVAL goes out only when the
     * NOSCRIPT reply arrives, so commands sent meanwhile overtake it: the fallback is skipped once
     * the caller has given up on the reply ({@link #await} timed out), and fire-and-forget scripts
     * that must stay in order use {@link #runInOrder}.
     *
     * <p>A Cluster node answers TRYAGAIN, without running the script, while the script's slot is
     * being migrated and only some of its keys have moved; the script is sent again every
     * {@value ScriptCalls#TRY_AGAIN_MILLIS} ms until the command timeout has passed since the first send. So
     * is a script answered ASK (the slot in migration, its keys gone) on a connection to one node,
     * which does not follow redirections (the replication guard's on Cluster): a multi-key script
     * sent with ASKING to the importing node would get TRYAGAIN there anyway, until the migration
     * ends with MOVED. And so is a script Lettuce did not send because its topology names no master for the slot (a
     * view read amid a failover): it was never sent, so sending it again cannot run it twice.
     */
    public <T> CompletableFuture<T> run(LuaScript script, ScriptOutputType type, String[] keys, String... args) {
        return scripts.run(script, type, keys, args);
    }

    /**
     * As {@link #run}, for a caller that does not wait in {@link #await}: the reply fails with a
     * timeout after the command timeout (Lettuce's own, when it has one for every command).
     */
    public <T> CompletableFuture<T> runTimed(LuaScript script, ScriptOutputType type, String[] keys, String... args) {
        CompletableFuture<T> reply = run(script, type, keys, args);
        if (!lettuceTimesOut && !reply.isDone()) {
            ScheduledFuture<?> limit = timer.schedule(() -> {
                synchronized (reply) {
                    reply.completeExceptionally(new RedisCommandTimeoutException("no reply within "
                            + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms"));
                }
            }, timeoutNanos, TimeUnit.NANOSECONDS);
            reply.whenComplete((value, error) -> limit.cancel(false));
        }
        return reply;
    }

    /**
     * Gives up on a reply of {@link #run}: no NOSCRIPT fallback follows any more, so a command sent
     * after this cannot be overtaken by it. Holding the monitor only to cancel, never to wait, is
     * harmless for virtual threads.
     */
    public void abandon(CompletableFuture<?> reply) {
        synchronized (reply) {
            reply.cancel(false);
        }
    }

    /**
     * Runs a script by EVAL, so it reaches Redis after every command this thread sent before it
     * and before every command it sends after: for fire-and-forget clean-ups whose order matters.
     */
    public <T> CompletableFuture<T> runInOrder(LuaScript script, ScriptOutputType type, String[] keys, String... args) {
        return commands.<T>eval(script.body(), type, keys, args).toCompletableFuture();
    }

    /**
     * Waits for a reply in the calling thread, at most the command timeout. An interrupt does not
     * cut the wait short (the command may already be applied, and its caller must know the
     * outcome); the interrupt status is restored before returning.
     *
     * @throws RedisUnavailableException on timeout or connection failure
     * @throws RelockException when Redis refused the command
     */
    public <T> T await(CompletionStage<T> reply, String operation, String lockName) {
        CompletableFuture<T> future = reply.toCompletableFuture();
        return await(future, future, operation, lockName);
    }

    /**
     * As {@link #await(CompletionStage, String, String)}, but the calling thread goes on only once {@code after}, a
     * stage that completes after what runs on {@code reply}'s completion (a hand-over to the lock's next holder in this
     * client), is done too, whatever its outcome: the I/O thread that reads the reply wakes that next holder before
     * this thread, which competes with it for a core. The outcome is {@code reply}'s; a timeout abandons {@code reply}.
     */
    public <T> T await(CompletableFuture<T> reply, CompletableFuture<?> after, String operation, String lockName) {
        long deadline = ticker.getAsLong() + timeoutNanos;
        boolean interrupted = false;
        try {
            while (after != reply && !after.isDone()) {
                try {
                    after.get(Math.max(0, deadline - ticker.getAsLong()), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (ExecutionException e) {
                    if (reply.isDone() && !reply.isCompletedExceptionally()) {
                        // what ran on the reply failed, not the command: a bug, said; the reply stands
                        log.warn("{}: what runs after the reply failed; the reply stands",
                                RedisFailures.what(operation, lockName), e.getCause());
                    }
                    break;
                } catch (CancellationException | TimeoutException e) {
                    // the reply's own wait below says what became of it
                    break;
                }
            }
            while (true) {
                try {
                    return reply.get(Math.max(0, deadline - ticker.getAsLong()), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (TimeoutException e) {
                    // no NOSCRIPT fallback may follow once the caller has moved on
                    abandon(reply);
                    throw RedisFailures.timedOut(operation, lockName, address, timeoutNanos, e);
                } catch (ExecutionException e) {
                    throw failure(e.getCause(), operation, lockName);
                } catch (CancellationException e) {
                    // a command of Lettuce's own API that Lettuce cancelled fails its future this way
                    throw failure(e, operation, lockName);
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * As {@link #await(CompletableFuture, CompletableFuture, String, String)}, without blocking: a stage that
     * completes with {@code reply}'s value once {@code after} is done too, or exceptionally with the
     * {@link RelockException} {@code await} would throw; after the command timeout with
     * {@link RedisUnavailableException}, {@code reply} then abandoned. Completes on the I/O thread that read the
     * reply, or on the timer's thread.
     */
    public <T> CompletableFuture<T> within(CompletableFuture<T> reply, CompletableFuture<?> after, String operation,
            String lockName) {
        CompletableFuture<T> outcome = new CompletableFuture<>();
        ScheduledFuture<?> limit;
        try {
            limit = timer.schedule(() -> {
                if (outcome.completeExceptionally(
                        RedisFailures.timedOut(operation, lockName, address, timeoutNanos, new TimeoutException()))) {
                    // no NOSCRIPT fallback may follow once the caller has moved on
                    abandon(reply);
                }
            }, timeoutNanos, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            // the executors stop only with the client, whose connections close: the reply fails soon
            limit = null;
        }
        ScheduledFuture<?> armed = limit;
        after.whenComplete((ignored, failed) -> reply.whenComplete((value, error) -> {
            if (armed != null) {
                armed.cancel(false);
            }
            if (error == null) {
                outcome.complete(value);
            } else {
                outcome.completeExceptionally(failure(error, operation, lockName));
            }
        }));
        return outcome;
    }

    /** As {@link #within(CompletableFuture, CompletableFuture, String, String)}, with nothing to wait for after. */
    public <T> CompletableFuture<T> within(CompletableFuture<T> reply, String operation, String lockName) {
        return within(reply, reply, operation, lockName);
    }

    /** The exception a caller sees for a failed command; see {@link RedisFailures#toRelockException}. */
    public RelockException failure(Throwable error, String operation, String lockName) {
        return RedisFailures.toRelockException(error, operation, lockName, address, timeoutNanos);
    }
}
