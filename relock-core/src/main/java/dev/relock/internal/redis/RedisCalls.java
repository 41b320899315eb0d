package dev.relock.internal.redis;

import dev.relock.RedisUnavailableException;
import dev.relock.RelockException;
import dev.relock.ReplicationGuard;
import dev.relock.internal.script.LuaScript;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.cluster.PartitionSelectorException;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.internal.ExceptionFactory;
import io.lettuce.core.output.ArrayOutput;
import io.lettuce.core.output.BooleanOutput;
import io.lettuce.core.output.CommandOutput;
import io.lettuce.core.output.IntegerOutput;
import io.lettuce.core.output.NestedMultiOutput;
import io.lettuce.core.output.ObjectOutput;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.output.ValueOutput;
import io.lettuce.core.protocol.Command;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import io.lettuce.core.protocol.CommandWrapper;
import io.lettuce.core.protocol.CompleteableCommand;
import io.lettuce.core.protocol.ProtocolKeyword;
import io.lettuce.core.protocol.RedisCommand;
import java.io.IOException;
import java.net.ConnectException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends commands on the client's one multiplexed connection and turns their replies into values
 * or {@link RelockException}s that name the lock and the operation.
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

    /** How long to wait before sending a script again after TRYAGAIN (a slot in migration). */
    public static final long TRY_AGAIN_MILLIS = 20;

    // "0" to "9" in ASCII, the key counts of EVALSHA; shared, never changed
    private static final byte[][] KEY_COUNTS = new byte[10][];

    static {
        for (int count = 0; count < KEY_COUNTS.length; count++) {
            KEY_COUNTS[count] = new byte[] {(byte) ('0' + count)};
        }
    }

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

    private final StatefulConnection<String, String> connection;
    private final RedisClusterAsyncCommands<String, String> commands;
    private final long timeoutNanos;
    private final String address;
    private final ScheduledExecutorService timer;
    private final boolean lettuceTimesOut;

    /**
     * @param timer runs the time limit of {@link #runTimed} when Lettuce does not, and the resends
     *     after TRYAGAIN
     * @param lettuceTimesOut whether Lettuce itself fails every command after {@code timeout}
     */
    public RedisCalls(StatefulConnection<String, String> connection, RedisClusterAsyncCommands<String, String> commands,
            Duration timeout, String address, ScheduledExecutorService timer, boolean lettuceTimesOut) {
        this.connection = connection;
        this.commands = commands;
        this.timeoutNanos = timeout.toNanos();
        this.address = address;
        this.timer = timer;
        this.lettuceTimesOut = lettuceTimesOut;
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
     * {@value #TRY_AGAIN_MILLIS} ms until the command timeout has passed since the first send. So
     * is a script answered ASK (the slot in migration, its keys gone) on a connection to one node,
     * which does not follow redirections (the replication guard's on Cluster): a multi-key script
     * sent with ASKING to the importing node would get TRYAGAIN there anyway, until the migration
     * ends with MOVED. And so is a script Lettuce did not send because its topology names no master for the slot (a
     * view read amid a failover): it was never sent, so sending it again cannot run it twice.
     */
    public <T> CompletableFuture<T> run(LuaScript script, ScriptOutputType type, String[] keys, String... args) {
        ScriptCall<T> reply = new ScriptCall<>(System.nanoTime() + timeoutNanos, script, type, keys, args);
        reply.send();
        return reply;
    }

    /**
     * The outcome of one {@link #run}, which hears its EVALSHA's outcome, and that of the EVAL after NOSCRIPT or of
     * the resends after TRYAGAIN. Given up ({@link #abandon}), it still lets the EVALSHA run: Lettuce writes it, and
     * sends it again after a reconnect, as any command.
     */
    private final class ScriptCall<T> extends CompletableFuture<T> {

        private final long retryUntil;
        private final LuaScript script;
        private final ScriptOutputType type;
        private final String[] keys;
        private final String[] args;

        ScriptCall(long retryUntil, LuaScript script, ScriptOutputType type, String[] keys, String[] args) {
            this.retryUntil = retryUntil;
            this.script = script;
            this.type = type;
            this.keys = keys;
            this.args = args;
        }

        void send() {
            Evalsha<T> evalsha = new Evalsha<>(this, script, output(type), keys, args);
            try {
                connection.dispatch(evalsha);
            } catch (RuntimeException e) {
                evalsha.completeExceptionally(e);
            }
        }

        /**
         * An outcome of a command of this call: on the I/O thread that read it, on the sender's thread if it was
         * refused before it was sent, on an event executor for one Lettuce timed out, and on the timer's thread for a
         * resend after TRYAGAIN that was refused.
         */
        void answered(T value, Throwable error) {
            try {
                handle(value, error);
            } catch (RuntimeException e) {
                // the fallback or the resend could not be sent (the client's executors stopped): no command is
                // left to end this call, so it ends here
                completeExceptionally(e);
            }
        }

        private void handle(T value, Throwable error) {
            if (error == null) {
                complete(value);
            } else if (unwrap(error) instanceof RedisNoScriptException) {
                // this future's monitor orders this against the caller's giving up in await()
                synchronized (this) {
                    if (!isDone()) {
                        commands.<T>eval(script.body(), type, keys, args).whenComplete((evaluated, failed) -> {
                            if (failed == null) {
                                complete(evaluated);
                            } else if (!retryLater(failed)) {
                                completeExceptionally(unwrap(failed));
                            }
                        });
                    }
                }
            } else if (!retryLater(error)) {
                completeExceptionally(unwrap(error));
            }
        }

        /**
         * Schedules the script again if Redis said TRYAGAIN (or ASK), or Lettuce sent nothing for want of a master of
         * the slot, and there is time left; false otherwise.
         */
        private boolean retryLater(Throwable error) {
            if (!(isSlotMigrating(error) || isSlotUncovered(error))
                    || System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(TRY_AGAIN_MILLIS) > retryUntil) {
                return false;
            }
            timer.schedule(() -> {
                synchronized (this) {
                    if (!isDone()) {
                        send();
                    }
                }
            }, TRY_AGAIN_MILLIS, TimeUnit.MILLISECONDS);
            return true;
        }
    }

    /**
     * The EVALSHA of a {@link ScriptCall}, which Lettuce writes, completes, times out and cancels: it does for the call
     * what an {@link io.lettuce.core.protocol.AsyncCommand} does for a command of Lettuce's API, with no future and no
     * completion stage of its own, as every lock and release sends one. It ends once, at the first end Lettuce reports
     * (one reported later, such as its timeout firing as the reply is read, changes nothing); it then runs what Lettuce
     * asked to run at its end (the cancel of its timeout) and hands its outcome to the call.
     */
    private static final class Evalsha<T> extends Command<String, String, T> implements CompleteableCommand<T> {

        @SuppressWarnings("rawtypes")
        private static final AtomicIntegerFieldUpdater<Evalsha> ENDED =
                AtomicIntegerFieldUpdater.newUpdater(Evalsha.class, "ended");

        private final ScriptCall<T> call;
        // 1 once Lettuce reported the end
        private volatile int ended;
        // what Lettuce asked to run at the end, in its order: the first here, any more (tracing) in moreOnEnd;
        // taken, and run, by the thread that ended it, once its outcome is in place (endTaken). Guarded by this
        private BiConsumer<? super T, Throwable> onEnd;
        private List<BiConsumer<? super T, Throwable>> moreOnEnd;
        private boolean endTaken;

        Evalsha(ScriptCall<T> call, LuaScript script, CommandOutput<String, String, T> output, String[] keys,
                String[] args) {
            super(CommandType.EVALSHA, output, new CommandArgs<>(Utf8Codec.INSTANCE));
            this.call = call;
            // the digest and the key count as bytes, which Lettuce copies: as a String and a number it would encode
            // them through new strings and arrays every time
            this.args.add(script.shaBytes());
            if (keys.length < KEY_COUNTS.length) {
                this.args.add(KEY_COUNTS[keys.length]);
            } else {
                this.args.add(keys.length);
            }
            this.args.addKeys(keys).addValues(args);
        }

        /** Lettuce read the reply, on the I/O thread. */
        @Override
        public void complete() {
            if (ENDED.compareAndSet(this, 0, 1)) {
                super.complete();
                Throwable failure = failure();
                ended(failure == null ? output.get() : null, failure);
            }
        }

        /** Why it failed, once ended: cancelled, failed by Lettuce, or answered with an error; null if it did not. */
        private Throwable failure() {
            return isCancelled() ? new CancellationException("Lettuce cancelled the command")
                    : exception != null ? exception
                    : output.hasError() ? ExceptionFactory.createExecutionException(output.getError())
                    : null;
        }

        /** Lettuce failed it: a timeout, a lost connection, a refusal. */
        @Override
        public boolean completeExceptionally(Throwable error) {
            if (!ENDED.compareAndSet(this, 0, 1)) {
                return false;
            }
            super.completeExceptionally(error);
            ended(null, error);
            return true;
        }

        /** Lettuce cancelled it: its connection was closed or reset with it unanswered. */
        @Override
        public void cancel() {
            if (ENDED.compareAndSet(this, 0, 1)) {
                super.cancel();
                ended(null, failure());
            }
        }

        private void ended(T value, Throwable error) {
            BiConsumer<? super T, Throwable> first;
            List<BiConsumer<? super T, Throwable>> more;
            synchronized (this) {
                first = onEnd;
                more = moreOnEnd;
                onEnd = null;
                moreOnEnd = null;
                endTaken = true;
            }
            if (first != null) {
                runOnEnd(first, value, error);
            }
            if (more != null) {
                more.forEach(action -> runOnEnd(action, value, error));
            }
            call.answered(value, error);
        }

        private void runOnEnd(BiConsumer<? super T, Throwable> action, T value, Throwable error) {
            try {
                action.accept(value, error);
            } catch (RuntimeException e) {
                // as in a completion stage, a failure of one stays with it
                log.warn("what Lettuce runs at the end of an EVALSHA failed", e);
            }
        }

        @Override
        public void onComplete(BiConsumer<? super T, Throwable> action) {
            synchronized (this) {
                if (!endTaken) {
                    if (onEnd == null) {
                        onEnd = action;
                    } else {
                        if (moreOnEnd == null) {
                            moreOnEnd = new ArrayList<>(2);
                        }
                        moreOnEnd.add(action);
                    }
                    return;
                }
            }
            // ended, with its outcome in place
            Throwable failure = failure();
            runOnEnd(action, failure == null ? output.get() : null, failure);
        }

        @Override
        public void onComplete(Consumer<? super T> action) {
            onComplete((value, error) -> {
                if (error == null) {
                    action.accept(value);
                }
            });
        }

        /** As Lettuce's own commands: equal to every wrapper of it. */
        @Override
        public boolean equals(Object other) {
            return other instanceof RedisCommand<?, ?, ?> command && CommandWrapper.unwrap(command) == this;
        }

        @Override
        public int hashCode() {
            return System.identityHashCode(this);
        }
    }

    /** The output Lettuce's own EVALSHA of {@code type} decodes into. */
    @SuppressWarnings("unchecked")
    private static <T> CommandOutput<String, String, T> output(ScriptOutputType type) {
        return (CommandOutput<String, String, T>) switch (type) {
            case BOOLEAN -> new BooleanOutput<>(Utf8Codec.INSTANCE);
            case INTEGER -> new IntegerOutput<>(Utf8Codec.INSTANCE);
            case STATUS -> new StatusOutput<>(Utf8Codec.INSTANCE);
            case MULTI -> new NestedMultiOutput<>(Utf8Codec.INSTANCE);
            case VALUE -> new ValueOutput<>(Utf8Codec.INSTANCE);
            case OBJECT -> new ObjectOutput<>(Utf8Codec.INSTANCE);
        };
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
        long deadline = System.nanoTime() + timeoutNanos;
        boolean interrupted = false;
        try {
            while (after != reply && !after.isDone()) {
                try {
                    after.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (ExecutionException e) {
                    if (reply.isDone() && !reply.isCompletedExceptionally()) {
                        // what ran on the reply failed, not the command: a bug, said; the reply stands
                        log.warn("{}: what runs after the reply failed; the reply stands", what(operation, lockName),
                                e.getCause());
                    }
                    break;
                } catch (CancellationException | TimeoutException e) {
                    // the reply's own wait below says what became of it
                    break;
                }
            }
            while (true) {
                try {
                    return reply.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (TimeoutException e) {
                    // no NOSCRIPT fallback may follow once the caller has moved on
                    abandon(reply);
                    throw new RedisUnavailableException(
                            what(operation, lockName) + ": Redis at " + address + " did not answer within "
                                    + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms", e);
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
                if (outcome.completeExceptionally(new RedisUnavailableException(what(operation, lockName)
                        + ": Redis at " + address + " did not answer within "
                        + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms", new TimeoutException()))) {
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

    /** The exception a caller sees for a failed command. */
    public RelockException failure(Throwable error, String operation, String lockName) {
        Throwable cause = unwrap(error);
        String what = what(operation, lockName);
        if (cause instanceof RelockException relock) {
            return relock;
        }
        if (cause instanceof RedisCommandTimeoutException) {
            return new RedisUnavailableException(what + ": Redis at " + address + " did not answer within "
                    + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms", cause);
        }
        if (isSlotMigrating(cause)) {
            // not run, and not for long: the lock is out of reach as when Redis does not answer
            return new RedisUnavailableException(what + ": its Cluster slot is being migrated and Redis at " + address
                    + " ran nothing for " + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms: " + cause.getMessage(),
                    cause);
        }
        if (cause instanceof RedisCommandExecutionException) {
            String message = String.valueOf(cause.getMessage());
            if (message.contains("WRONGTYPE")) {
                return new RelockException(what + ": a key of lock '" + lockName + "' at Redis " + address
                        + " holds a value of another type (WRONGTYPE); relock left it untouched", cause);
            }
            return new RelockException(what + ": Redis at " + address + " refused the command: " + message, cause);
        }
        if (cause instanceof RedisConnectionException || cause instanceof RedisException) {
            return new RedisUnavailableException(
                    what + ": Redis at " + address + " is unreachable: " + cause.getMessage(), cause);
        }
        if (cause instanceof CancellationException) {
            // Lettuce cancels what is unanswered when its connection is closed (or reset): as after a timeout, the
            // command may or may not have run
            return new RedisUnavailableException(what + ": the connection to Redis at " + address
                    + " was closed with the command unanswered", cause);
        }
        if (cause instanceof IOException) {
            // Lettuce fails the commands in flight with the socket's own error when a connection is reset
            // ("Connection reset"): the command may or may not have run, as after a timeout
            return new RedisUnavailableException(
                    what + ": the connection to Redis at " + address + " failed: " + cause, cause);
        }
        return new RelockException(what + " failed: " + cause, cause);
    }

    private static String what(String operation, String lockName) {
        return lockName == null ? operation : operation + " of lock '" + lockName + "'";
    }

    /** Whether {@code error} (or a cause) says a connection could not be opened or was lost. */
    public static boolean isConnectionFailure(Throwable error) {
        for (Throwable cause = error; cause != null; cause = cause.getCause()) {
            if (cause instanceof RedisConnectionException || cause instanceof ConnectException) {
                return true;
            }
        }
        return false;
    }

    /** Whether Redis answered MOVED: a Cluster node that does not serve the key's slot ran nothing. */
    public static boolean isMoved(Throwable error) {
        for (Throwable cause = error; cause != null; cause = cause.getCause()) {
            if (cause instanceof RedisCommandExecutionException
                    && String.valueOf(cause.getMessage()).startsWith("MOVED ")) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether a Cluster node ran nothing because the script's slot is being migrated: TRYAGAIN (some of its keys
     * are on the node, some not, or none on the importing node) or ASK where no redirection is followed. Lasts
     * until the migration ends; {@link #run} has already sent it again for a command timeout.
     */
    public static boolean isSlotMigrating(Throwable error) {
        Throwable cause = unwrap(error);
        String message = String.valueOf(cause.getMessage());
        return cause instanceof RedisCommandExecutionException
                && (message.startsWith("TRYAGAIN") || message.startsWith("ASK "));
    }

    /**
     * Whether Lettuce sent nothing because its view of the Cluster names no master for the command's slot: a topology
     * read amid a failover, from a node that had not yet heard of the promotion. Where its uncovered-slot refresh
     * trigger is on (relock's own Cluster clients turn every adaptive trigger on), Lettuce asks for a fresh topology
     * when it meets one, so a later try finds the master; elsewhere only a periodic refresh may.
     */
    public static boolean isSlotUncovered(Throwable error) {
        for (Throwable cause = error; cause != null; cause = cause.getCause()) {
            if (cause instanceof PartitionSelectorException) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether a command failed with {@code error} because its connection can run nothing more for
     * it: answered MOVED or ASK (the slot is served elsewhere), or refused or cut off by Lettuce
     * because the connection is closed or down. Not a timeout: the connection may still run it.
     */
    public static boolean connectionGone(Throwable error) {
        Throwable cause = unwrap(error);
        if (cause instanceof RedisCommandExecutionException) {
            String message = String.valueOf(cause.getMessage());
            return message.startsWith("MOVED ") || message.startsWith("ASK ");
        }
        String message = String.valueOf(cause.getMessage());
        return cause instanceof RedisException && !(cause instanceof RedisCommandTimeoutException)
                // Lettuce: "Connection closed", "Connection disconnected", "Currently not connected…"
                && (message.contains("closed") || message.contains("connected"));
    }

    public static Throwable unwrap(Throwable error) {
        Throwable cause = error;
        while ((cause instanceof CompletionException || cause instanceof ExecutionException)
                && cause.getCause() != null) {
            cause = cause.getCause();
        }
        return cause;
    }
}
