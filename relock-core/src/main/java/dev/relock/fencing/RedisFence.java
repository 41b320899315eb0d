package dev.relock.fencing;

import dev.relock.internal.script.FencingScripts;
import dev.relock.internal.script.LuaScript;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;
import io.lettuce.core.api.sync.RedisScriptingCommands;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

/**
 * Writes to Redis keys that accept a write only from a fencing token not older than the last one
 * that wrote them: a holder whose lock was lost (lease ran out during a GC pause, a stopped VM, a
 * partition) and who writes after the next holder did is refused, in Redis, atomically.
 *
 * <pre>{@code
 * RedisFence fence = RedisFence.on(connection);        // your own Lettuce connection
 * try (LockHandle held = client.lock("account:42").acquire()) {
 *     long balance = Long.parseLong(connection.sync().get("account:42"));
 *     fence.set("account:42", Long.toString(balance + 10), held.fencingToken());
 * }                                                     // StaleFencingTokenException if overtaken
 * }</pre>
 *
 * <p>Each write is one script ({@code fenced-set.lua}, by EVALSHA, by EVAL after NOSCRIPT): if the
 * token is at least the last recorded one, {@code SET key value} and record the token; otherwise
 * change nothing. An <em>equal</em> token writes: it is the same hold writing again, since every
 * fresh acquisition of a relock lock gets a greater token than all before it. The token is kept in
 * a key of its own, {@link #tokenKey(String)}, in the resource's Cluster slot and without a TTL; it
 * must outlive every holder, and deleting it lets any token write again ({@code GET} it to see the
 * last token). Fence a key with the tokens of one lock only: tokens of different locks are not
 * ordered against each other.
 *
 * <p>What this does not do: it fences writes made through it, not a plain {@code SET} from
 * elsewhere; a reader of the value sees no token; and a key learns a token only when it is
 * written, so a late write that lands after the next holder acquired but before that holder's
 * first write still goes through (that write then replaces it). Redis failures come out as Lettuce's
 * exceptions, as for any command on the connection. Immutable and thread-safe; it never closes the
 * connection.
 */
public final class RedisFence {

    // loaded by relock's one script loader; run here on the user's connection, not through an engine
    private static final LuaScript SCRIPT = FencingScripts.FENCED_SET;
    private static final String TOKEN_KEY_SUFFIX = ":fencing-token";

    private final RedisScriptingCommands<String, String> sync;
    private final RedisScriptingAsyncCommands<String, String> async;

    private RedisFence(RedisScriptingCommands<String, String> sync, RedisScriptingAsyncCommands<String, String> async) {
        this.sync = sync;
        this.async = async;
    }

    /** A fence writing through a standalone or Sentinel connection; the connection stays yours. */
    public static RedisFence on(StatefulRedisConnection<String, String> connection) {
        Objects.requireNonNull(connection, "connection");
        return new RedisFence(connection.sync(), connection.async());
    }

    /** A fence writing through a Cluster connection; every script touches one slot. */
    public static RedisFence on(StatefulRedisClusterConnection<String, String> connection) {
        Objects.requireNonNull(connection, "connection");
        return new RedisFence(connection.sync(), connection.async());
    }

    /**
     * Sets {@code key} to {@code value} if {@code fencingToken} is not older than the last token
     * that wrote it.
     *
     * @return true when written; false when a newer token has written the key (nothing changed)
     * @throws IllegalArgumentException for a negative token or a key this fence cannot pair with a
     *     token key (see {@link #tokenKey(String)})
     */
    public boolean trySet(String key, String value, long fencingToken) {
        return runSync(key, value, fencingToken).written();
    }

    /**
     * Sets {@code key} to {@code value}, or throws if a newer token has written it.
     *
     * @throws StaleFencingTokenException when a newer token has written the key (nothing changed)
     * @throws IllegalArgumentException for a negative token or a key this fence cannot pair with a
     *     token key (see {@link #tokenKey(String)})
     */
    public void set(String key, String value, long fencingToken) {
        runSync(key, value, fencingToken).orThrow(key, fencingToken);
    }

    /**
     * {@link #trySet} without blocking: completes with true when written, false when a newer token
     * has written the key. Argument errors are thrown at once.
     */
    public CompletionStage<Boolean> trySetAsync(String key, String value, long fencingToken) {
        return runAsync(key, value, fencingToken).thenApply(Outcome::written);
    }

    /**
     * {@link #set} without blocking: completes when written, or exceptionally with
     * {@link StaleFencingTokenException} when a newer token has written the key. Argument errors
     * are thrown at once.
     */
    public CompletionStage<Void> setAsync(String key, String value, long fencingToken) {
        return runAsync(key, value, fencingToken).thenAccept(outcome -> outcome.orThrow(key, fencingToken));
    }

    /**
     * The key that keeps the last token written to {@code key}: {@code key + ":fencing-token"} when
     * {@code key} has a Cluster hash tag (the suffix keeps it), else {@code "{" + key + "}:fencing-token"}
     * (its tag is the whole key, so it hashes to the key's slot).
     *
     * @throws IllegalArgumentException when {@code key} is empty, or contains a closing brace but no
     *     non-empty hash tag: no other key can share its slot then
     */
    public static String tokenKey(String key) {
        Objects.requireNonNull(key, "key");
        if (key.isEmpty()) {
            throw new IllegalArgumentException("key is empty");
        }
        int open = key.indexOf('{');
        int close = open < 0 ? -1 : key.indexOf('}', open + 1);
        if (close > open + 1) {
            return key + TOKEN_KEY_SUFFIX;
        }
        if (key.indexOf('}') >= 0) {
            throw new IllegalArgumentException("key '" + key + "' contains '}' but no hash tag, so no token key"
                    + " can share its Cluster slot; give it a non-empty hash tag, as in 'balance:{account:42}'");
        }
        return "{" + key + "}" + TOKEN_KEY_SUFFIX;
    }

    private Outcome runSync(String key, String value, long fencingToken) {
        String[] keys = keys(key, value, fencingToken);
        String token = Long.toString(fencingToken);
        List<Object> reply;
        try {
            reply = sync.evalsha(SCRIPT.sha(), ScriptOutputType.MULTI, keys, value, token);
        } catch (RedisNoScriptException e) {
            reply = sync.eval(SCRIPT.body(), ScriptOutputType.MULTI, keys, value, token);
        }
        return Outcome.of(reply);
    }

    private CompletableFuture<Outcome> runAsync(String key, String value, long fencingToken) {
        String[] keys = keys(key, value, fencingToken);
        String token = Long.toString(fencingToken);
        return async.<List<Object>>evalsha(SCRIPT.sha(), ScriptOutputType.MULTI, keys, value, token)
                .toCompletableFuture()
                .exceptionallyCompose(error -> unwrap(error) instanceof RedisNoScriptException
                        ? async.<List<Object>>eval(SCRIPT.body(), ScriptOutputType.MULTI, keys, value, token)
                                .toCompletableFuture()
                        : CompletableFuture.failedFuture(unwrap(error)))
                .thenApply(Outcome::of);
    }

    private static String[] keys(String key, String value, long fencingToken) {
        Objects.requireNonNull(value, "value");
        if (fencingToken < 0) {
            throw new IllegalArgumentException("fencing token " + fencingToken + " is negative");
        }
        return new String[] {key, tokenKey(key)};
    }

    private static Throwable unwrap(Throwable error) {
        return error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
    }

    /** The script's reply: whether it wrote, and the token recorded afterwards. */
    private record Outcome(boolean written, long recordedToken) {

        static Outcome of(List<Object> reply) {
            return new Outcome((Long) reply.get(0) == 1L, Long.parseLong((String) reply.get(1)));
        }

        void orThrow(String key, long fencingToken) {
            if (!written) {
                throw new StaleFencingTokenException(key, fencingToken, recordedToken);
            }
        }
    }
}
