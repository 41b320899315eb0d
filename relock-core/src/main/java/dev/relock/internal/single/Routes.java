package dev.relock.internal.single;

import dev.relock.internal.engine.LockKeys;
import dev.relock.internal.engine.Ticker;
import dev.relock.internal.redis.RedisCalls;
import dev.relock.internal.redis.RedisFailures;
import dev.relock.internal.redis.Utf8Codec;
import dev.relock.internal.script.LuaScript;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.RedisClusterClient;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which connection a command takes and where its wake-ups travel: the slot of a key, the acquisitions' connection
 * (a replication guard's, or the shared one), the shared one for clean-ups whose own connection is gone, a fresh
 * Cluster topology after {@code MOVED} on a guard's node connection or after an unreachable node, and the wake-up
 * routes of scripts and waiters ({@link ShardWakeChannels} with sharded pub/sub, else the client's own channel).
 *
 * <p>Any thread; never blocks.
 */
final class Routes {

    // the engine's log category, the one users set levels for
    private static final Logger log = LoggerFactory.getLogger(SingleServerEngine.class);
    // refreshIfUnreachable asks for a fresh Cluster topology at most this often
    private static final long UNREACHABLE_REFRESH_NANOS = TimeUnit.SECONDS.toNanos(1);

    // the shared command connection's calls
    private final RedisCalls calls;
    private final CompletableFuture<RedisCalls> guardedCalls;
    // with a replication guard on Cluster: one connection per master, else null
    private final ClusterGuardLinks guardLinks;
    // a Redis Cluster client: keys are routed by slot, and one script may touch one slot only; else null
    private final RedisClusterClient clusterClient;
    // on a Cluster with sharded pub/sub: the lock channels waiters listen to; otherwise null, and
    // wake-ups come on the client's own channel, wakeChannelPrefix + client id
    private final ShardWakeChannels shardChannels;
    private final String wakeChannelPrefix;
    // the client's clock, which refreshes are spaced on
    private final Ticker ticker;
    // when the last topology refresh asked for by refreshIfUnreachable was, by the ticker
    private final AtomicLong lastUnreachableRefresh;

    Routes(ServerConnections connections, String wakeChannelPrefix, Ticker ticker) {
        this.ticker = ticker;
        this.lastUnreachableRefresh = new AtomicLong(ticker.nanoTime() - UNREACHABLE_REFRESH_NANOS);
        this.calls = connections.calls();
        this.guardedCalls = connections.guardedCalls();
        this.guardLinks = connections.guardLinks();
        this.clusterClient = connections.redisClient() instanceof RedisClusterClient client ? client : null;
        this.shardChannels = connections.shardChannels();
        this.wakeChannelPrefix = wakeChannelPrefix;
    }

    /** Whether this is a Redis Cluster, whose scripts may touch one slot each. */
    boolean cluster() {
        return clusterClient != null;
    }

    /** The Cluster slot of a key; 0 for every key on a standalone or Sentinel Redis. */
    int slotOf(String key) {
        return clusterClient != null ? Utf8Codec.slotOf(key) : 0;
    }

    /**
     * Where fresh acquisitions of keys in {@code slot}, their withdrawals and their replication
     * guard's {@code WAIT} go: one connection, so they reach Redis in order and the {@code WAIT}
     * counts the acquisition. Completed at once, except on Cluster with a guard while the
     * connection to the slot's master is being opened (see {@link ClusterGuardLinks}); such a
     * connection does not follow redirections, see {@link #refreshIfMoved}.
     */
    CompletableFuture<RedisCalls> acquisitionCalls(int slot) {
        return guardLinks != null ? guardLinks.toMasterOf(slot) : guardedCalls;
    }

    /**
     * Where releases of the lock at {@code lockKey} go: over the connection this client acquires on (a replication
     * guard's own, or the shared one), so that the owner's next acquisition of the lock reaches Redis after the
     * release. On another connection a release stalled past the command timeout (its hold already dropped here) could
     * be overtaken by that acquisition, which takes the stale hold over, and then free the lock under it. A guard's
     * connection still being opened (Cluster) leaves the shared one.
     */
    RedisCalls releaseCalls(String lockKey) {
        CompletableFuture<RedisCalls> route = acquisitionCalls(slotOf(lockKey));
        return route.isDone() && !route.isCompletedExceptionally() ? route.join() : calls;
    }

    /**
     * If {@code error} is a Cluster redirection ({@code MOVED}) that a guard's node connection met,
     * so the script was not run: asks for a fresh topology and returns when that is done, for a
     * retry on the slot's new master. Otherwise null. Only a guard's node connection sees MOVED;
     * the routed one follows it itself.
     */
    CompletableFuture<Void> refreshIfMoved(Throwable error) {
        return guardLinks != null && RedisFailures.isMoved(error) ? guardLinks.refreshTopology() : null;
    }

    /**
     * On a Cluster, asks Lettuce for a fresh topology when {@code error} says a node could not be
     * reached, at most once a second; any thread, never blocks. Lettuce's adaptive refresh does not
     * count a connection that could not be opened, and a client that read the topology from a node
     * that had not yet seen a failover would otherwise keep routing to the dead master until its
     * periodic refresh (30 s).
     */
    void refreshIfUnreachable(Throwable error) {
        if (clusterClient == null || !RedisFailures.isConnectionFailure(error)) {
            return;
        }
        long now = ticker.nanoTime();
        long last = lastUnreachableRefresh.get();
        if (now - last < UNREACHABLE_REFRESH_NANOS || !lastUnreachableRefresh.compareAndSet(last, now)) {
            return;
        }
        clusterClient.refreshPartitionsAsync().whenComplete((done, failure) -> {
            if (failure != null) {
                log.debug("refreshing the cluster topology after an unreachable node failed: {}", failure.toString());
            }
        });
    }

    /**
     * Runs a clean-up script in order on {@code on} (an acquisition's connection), without
     * waiting; if that connection can no longer run it (closed, or the slot moved away from its
     * node: a guard's node connection on Cluster), over the shared connection instead. The
     * fallback is sent only once {@code on} has failed the script, so it follows whatever {@code on}
     * carried before; the clean-up scripts undo only their own owner's fresh hold, so one that
     * ran twice does no harm.
     */
    CompletableFuture<Long> cleanUpOn(RedisCalls on, LuaScript script, String[] keys, String... args) {
        CompletableFuture<Long> sent = on.runInOrder(script, ScriptOutputType.INTEGER, keys, args);
        if (on == calls) {
            return sent;
        }
        return sent.exceptionallyCompose(error -> RedisFailures.connectionGone(error)
                ? calls.runInOrder(script, ScriptOutputType.INTEGER, keys, args)
                : CompletableFuture.failedFuture(error));
    }

    /**
     * Where the scripts on {@code keys} send wake-ups (see queue.lua): the lock's own shard channel
     * with sharded pub/sub, else the prefix of every client's own channel.
     */
    String wakeRoute(LockKeys keys) {
        return shardChannels != null ? keys.wakeChannel() : wakeChannelPrefix;
    }

    /** Where latch.lua sends the wake-ups of the latch at {@code latchKey}, as {@link #wakeRoute(LockKeys)}. */
    String wakeRoute(String latchKey) {
        return shardChannels != null ? latchKey + ":wake" : wakeChannelPrefix;
    }

    /**
     * {@code waiter}, whose attempt sent at {@code attemptSentNanos} found its lock taken, waits
     * from now on: with sharded pub/sub, listen to its lock's channel until
     * {@link #stopListeningForWakeUps(Acquisition)}. Called under the acquisition's lock.
     *
     * @return whether it should try again at once (see {@link ShardWakeChannels#join})
     */
    boolean listenForWakeUps(Acquisition waiter, long attemptSentNanos) {
        return shardChannels != null && shardChannels.join(waiter.keys().wakeChannel(), waiter, attemptSentNanos);
    }

    /** {@code waiter} no longer waits. Called under the acquisition's lock. */
    void stopListeningForWakeUps(Acquisition waiter) {
        if (shardChannels != null) {
            shardChannels.leave(waiter.keys().wakeChannel(), waiter);
        }
    }

    /**
     * A thread that waits for what a script on {@code key} (a latch, or a lock whose condition it waits in) will
     * announce, after a command sent at {@code sentNanos}: with sharded pub/sub, listen to the key's channel
     * ({@code key + ":wake"}, the lock's {@link LockKeys#wakeChannel}) until {@link #stopListeningForWakeUps(String,
     * ChannelWaiter)}.
     *
     * @return whether it should look again at once (see {@link ShardWakeChannels#join})
     */
    boolean listenForWakeUps(String key, ChannelWaiter waiter, long sentNanos) {
        return shardChannels != null && shardChannels.join(key + ":wake", waiter, sentNanos);
    }

    void stopListeningForWakeUps(String key, ChannelWaiter waiter) {
        if (shardChannels != null) {
            shardChannels.leave(key + ":wake", waiter);
        }
    }
}
