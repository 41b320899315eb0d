package dev.relock.internal.redis;

import dev.relock.internal.script.LuaScript;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * The script calls of one connection, and what is sent again for them: a script runs by EVALSHA; after NOSCRIPT
 * (script cache flushed, server restarted, a Cluster slot now served by another node) by EVAL, which reloads it; and
 * after a failure that ran nothing ({@link RedisFailures#mayResend}: TRYAGAIN, ASK without redirection, no known
 * master of the slot) again every {@value #TRY_AGAIN_MILLIS} ms until the command timeout has passed since the first
 * send, on the client's ticker. What a call's commands end with is mapped to relock's exceptions by its
 * caller ({@link RedisCalls}), not here. Thread-safe.
 */
final class ScriptCalls {

    /** How long to wait before sending a script again after a failure that ran nothing. */
    static final long TRY_AGAIN_MILLIS = 20;

    private final StatefulConnection<String, String> connection;
    private final RedisClusterAsyncCommands<String, String> commands;
    private final long timeoutNanos;
    private final ScheduledExecutorService timer;
    private final LongSupplier ticker;

    /**
     * @param timer runs the resends
     * @param ticker the client's ticker, in nanoseconds
     */
    ScriptCalls(StatefulConnection<String, String> connection, RedisClusterAsyncCommands<String, String> commands,
            long timeoutNanos, ScheduledExecutorService timer, LongSupplier ticker) {
        this.connection = connection;
        this.commands = commands;
        this.timeoutNanos = timeoutNanos;
        this.timer = timer;
        this.ticker = ticker;
    }

    /** Runs a script by EVALSHA, sending again as the class says; see {@link RedisCalls#run}. */
    <T> CompletableFuture<T> run(LuaScript script, ScriptOutputType type, String[] keys, String[] args) {
        ScriptCall<T> reply = new ScriptCall<>(ticker.getAsLong() + timeoutNanos, script, type, keys, args);
        reply.send();
        return reply;
    }

    /**
     * The outcome of one {@link #run}, which hears its EVALSHA's outcome, and that of the EVAL after NOSCRIPT or of
     * the resends. Given up ({@link RedisCalls#abandon}), it still lets the EVALSHA run: Lettuce writes it, and
     * sends it again after a reconnect, as any command. Its monitor orders a fallback or resend against the caller's
     * giving up.
     */
    final class ScriptCall<T> extends CompletableFuture<T> {

        // when the resends stop (ticker)
        private final long retryUntil;
        private final LuaScript script;
        private final ScriptOutputType type;
        private final String[] keys;
        private final String[] args;

        private ScriptCall(long retryUntil, LuaScript script, ScriptOutputType type, String[] keys, String[] args) {
            this.retryUntil = retryUntil;
            this.script = script;
            this.type = type;
            this.keys = keys;
            this.args = args;
        }

        private void send() {
            Evalsha<T> evalsha = new Evalsha<>(this, script, type, keys, args);
            try {
                connection.dispatch(evalsha);
            } catch (RuntimeException e) {
                evalsha.completeExceptionally(e);
            }
        }

        /**
         * An outcome of a command of this call: on the I/O thread that read it, on the sender's thread if it was
         * refused before it was sent, on an event executor for one Lettuce timed out, and on the timer's thread for a
         * resend that was refused.
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
            } else if (RedisFailures.unwrap(error) instanceof RedisNoScriptException) {
                // this future's monitor orders this against the caller's giving up in await()
                synchronized (this) {
                    if (!isDone()) {
                        commands.<T>eval(script.body(), type, keys, args).whenComplete((evaluated, failed) -> {
                            if (failed == null) {
                                complete(evaluated);
                            } else if (!retryLater(failed)) {
                                completeExceptionally(RedisFailures.unwrap(failed));
                            }
                        });
                    }
                }
            } else if (!retryLater(error)) {
                completeExceptionally(RedisFailures.unwrap(error));
            }
        }

        /** Schedules the script again if {@code error} ran nothing and there is time left; false otherwise. */
        private boolean retryLater(Throwable error) {
            if (!RedisFailures.mayResend(error)
                    || ticker.getAsLong() + TimeUnit.MILLISECONDS.toNanos(TRY_AGAIN_MILLIS) - retryUntil > 0) {
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
}
