package dev.relock.internal.single;

import dev.relock.internal.engine.LockKeys;
import dev.relock.internal.engine.Ticker;
import dev.relock.internal.redis.Utf8Codec;
import io.lettuce.core.cluster.event.ClusterTopologyChangedEvent;
import io.lettuce.core.cluster.models.partitions.Partitions;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.cluster.pubsub.RedisClusterPubSubAdapter;
import io.lettuce.core.cluster.pubsub.StatefulRedisClusterPubSubConnection;
import io.lettuce.core.event.EventBus;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;

/**
 * The lock channels a client subscribes to with sharded pub/sub on a Redis Cluster whose servers have it:
 * one channel per lock, in the lock's slot ({@link LockKeys#wakeChannel}), subscribed ({@code SSUBSCRIBE})
 * only while at least one of the client's acquisitions waits for that lock, and unsubscribed when the last
 * one leaves; the same for a count-down latch's channel while waits of the client are for it ({@link LatchWaits}). The wake-up messages themselves reach the {@link WaitingRoom}; this class only keeps the
 * subscriptions, and wakes the waiters whenever a subscription is (re)confirmed.
 *
 * <p>Design notes.
 * <ul>
 *   <li>No lost wake-up. A waiter joins after its first attempt failed, so a release may have been published
 *       before the server had the subscription. Hence: every confirmation of a channel's subscription (the
 *       server's {@code ssubscribe} reply, also after Lettuce subscribed again on a reconnect) wakes every
 *       waiter of the channel, which tries again; and a waiter that joins a channel confirmed after its attempt
 *       was sent tries again at once ({@link #join}'s result). Only a channel confirmed before the attempt was
 *       sent needs no new attempt: the release it waits for is published after the attempt.
 *   <li>Topology. When a slot moves (resharding, failover) the node that lost it unsubscribes its shard
 *       channel subscribers ({@code sunsubscribe} push). Lettuce 6.8 reports that to the listener and does
 *       not subscribe again, so this class does, for channels still wanted: Lettuce routes the new
 *       {@code SSUBSCRIBE} to the slot's owner (following MOVED), and its confirmation wakes the waiters; a
 *       topology read from a node that has not yet heard of the move is read again ({@link #afterRefresh}). A
 *       node that died unsubscribes nobody: a changed topology ({@link ClusterTopologyChangedEvent}) in which
 *       a wanted channel's slot has a master it is not subscribed on subscribes it again there, and forgets the
 *       nodes that failed or left, so a later move's SUNSUBSCRIBE from the live owner is known as the last. A failed
 *       {@code SSUBSCRIBE} is tried again with back-off while the channel is wanted. Whatever is lost
 *       meanwhile, every waiter still tries again at the holder's lease end and never waits past its deadline
 *       (see {@link Acquisition}).
 *   <li>Threads. {@link #join} and {@link #leave} are called by acquisitions under their own lock; the
 *       listener methods run on Lettuce I/O threads; retries and topology checks on the client's timer.
 *       {@code lock} guards {@link #channels} and is held while a subscription command is handed to Lettuce,
 *       so {@code SSUBSCRIBE} and {@code SUNSUBSCRIBE} of one channel leave in the order decided. It is never
 *       held while waking an acquisition (whose lock is taken before this one by join and leave).
 * </ul>
 */
final class ShardWakeChannels extends RedisClusterPubSubAdapter<String, String> {

    private static final Logger log = LoggerFactory.getLogger(ShardWakeChannels.class);
    // topology reads after a slot move whose view still names the node that let the slot go
    private static final long FIRST_STALE_REFRESH_MILLIS = 100;
    private static final int MAX_STALE_REFRESHES = 10;

    private final StatefulRedisClusterPubSubConnection<String, String> pubSub;
    private final ScheduledExecutorService timer;
    // the client's clock: when a subscription was confirmed, against when a waiter's attempt was sent
    private final Ticker ticker;
    // asks Lettuce to read the cluster's topology again; its change comes back as a ClusterTopologyChangedEvent
    private final Supplier<CompletionStage<Void>> refreshTopology;
    // a refresh asked for by a slot move is under way; later moves wait for its event
    private final AtomicBoolean refreshing = new AtomicBoolean();
    // guarded by lock: stale topology reads in a row since the last slot move (see afterRefresh)
    private int staleRefreshes;
    private final Disposable topologyEvents;
    private final ReentrantLock lock = new ReentrantLock();
    // guarded by lock: the channels some acquisition waits on
    private final Map<String, Channel> channels = new HashMap<>();
    private volatile boolean closed;

    /** One wanted channel. All fields guarded by {@code lock}. */
    private static final class Channel {
        final Set<ChannelWaiter> waiters = Collections.newSetFromMap(new IdentityHashMap<>());
        // ids of the nodes that confirmed a subscription and did not end it since
        final Set<String> nodes = new HashSet<>();
        boolean confirmed;
        // when the last confirmation came, by the client's ticker
        long confirmedAt;
        long retryNanos;
        boolean retryScheduled;
        // id of the node that last ended this channel's subscription because the slot moved away from it,
        // until a topology read names the slot's new owner; null otherwise
        String movedFrom;
    }

    ShardWakeChannels(StatefulRedisClusterPubSubConnection<String, String> pubSub, EventBus events,
            ScheduledExecutorService timer, Supplier<CompletionStage<Void>> refreshTopology, Ticker ticker) {
        this.pubSub = pubSub;
        this.timer = timer;
        this.ticker = ticker;
        this.refreshTopology = refreshTopology;
        pubSub.addListener(this);
        this.topologyEvents = events.get()
                .filter(ClusterTopologyChangedEvent.class::isInstance)
                .subscribe(event -> {
                    try {
                        topologyChanged((ClusterTopologyChangedEvent) event);
                    } catch (RuntimeException e) {
                        // an error would end the subscription to the event bus
                        log.warn("relock: checking shard channel subscriptions after a topology change failed", e);
                    }
                });
    }

    /**
     * {@code waiter} waits on {@code channel} from now on; subscribes when it is the channel's first.
     *
     * @param attemptSentNanos when the waiter's last attempt was sent, by the client's ticker
     * @return whether the waiter should try again at once: the subscription was confirmed after the attempt
     *     was sent, so a release in between was published to nobody
     */
    boolean join(String channel, ChannelWaiter waiter, long attemptSentNanos) {
        lock.lock();
        try {
            Channel wanted = channels.computeIfAbsent(channel, name -> new Channel());
            wanted.waiters.add(waiter);
            if (wanted.waiters.size() == 1 && !wanted.confirmed && !wanted.retryScheduled) {
                subscribe(channel, wanted, null);
                return false;
            }
            return wanted.confirmed && wanted.confirmedAt - attemptSentNanos >= 0;
        } finally {
            lock.unlock();
        }
    }

    /** {@code waiter} no longer waits on {@code channel}; unsubscribes when it was the last. */
    void leave(String channel, ChannelWaiter waiter) {
        lock.lock();
        try {
            Channel wanted = channels.get(channel);
            if (wanted == null || !wanted.waiters.remove(waiter) || !wanted.waiters.isEmpty()) {
                return;
            }
            channels.remove(channel);
            if (closed) {
                return;
            }
            try {
                // routed like the SSUBSCRIBE, to the slot's owner, so a later SSUBSCRIBE follows it in order
                pubSub.async().sunsubscribe(channel);
                RedisClusterNode owner = pubSub.getPartitions().getMasterBySlot(Utf8Codec.slotOf(channel));
                for (String node : wanted.nodes) {
                    if (owner == null || !owner.getNodeId().equals(node)) {
                        // subscribed there before the slot moved (e.g. a master turned replica): end that too
                        unsubscribeOn(node, channel);
                    }
                }
            } catch (RuntimeException e) {
                // never fails the acquisition that left; a subscription left behind only brings messages
                // the waiting room drops, and its ssubscribe after a reconnect is answered by SUNSUBSCRIBE
                log.debug("cannot unsubscribe shard channel {}: {}", channel, e.toString());
            }
        } finally {
            lock.unlock();
        }
    }

    /** Stops following the topology; the subscriptions end with the pub/sub connection. */
    void close() {
        closed = true;
        topologyEvents.dispose();
    }

    // ---- listener: Lettuce I/O threads ---------------------------------------------------------

    @Override
    public void ssubscribed(RedisClusterNode node, String channel, long count) {
        List<ChannelWaiter> toWake;
        lock.lock();
        try {
            Channel wanted = channels.get(channel);
            if (wanted == null) {
                // confirmed after its last waiter left (or Lettuce subscribed again on a reconnect): end it
                // where it was confirmed and along the route the SSUBSCRIBE took, which may be Lettuce's
                // default connection rather than the node connection unsubscribeOn reaches
                if (!closed) {
                    if (node != null) {
                        unsubscribeOn(node.getNodeId(), channel);
                    }
                    unsubscribeRouted(channel);
                }
                return;
            }
            if (node != null) {
                wanted.nodes.add(node.getNodeId());
            }
            wanted.confirmed = true;
            wanted.confirmedAt = ticker.nanoTime();
            wanted.retryNanos = 0;
            toWake = new ArrayList<>(wanted.waiters);
        } finally {
            lock.unlock();
        }
        // a wake-up may have been published while the server had no subscription: every waiter tries again
        toWake.forEach(ChannelWaiter::wake);
    }

    @Override
    public void sunsubscribed(RedisClusterNode node, String channel, long count) {
        boolean moved = false;
        lock.lock();
        try {
            Channel wanted = channels.get(channel);
            if (wanted == null || closed) {
                return;
            }
            // a node that did not confirm this wait's subscription ends the SUNSUBSCRIBE of an earlier wait
            boolean ended = node == null || wanted.nodes.remove(node.getNodeId());
            if (ended && wanted.nodes.isEmpty()) {
                // the slot moved away from the node, or an earlier wait's SUNSUBSCRIBE overtook this SSUBSCRIBE
                log.debug("shard channel {} no longer subscribed on {}; subscribing again at the slot's owner",
                        channel, node == null ? "its node" : node.getUri());
                wanted.confirmed = false;
                if (!wanted.retryScheduled) {
                    subscribe(channel, wanted, null);
                }
                if (node != null) {
                    wanted.movedFrom = node.getNodeId();
                    staleRefreshes = 0;
                }
                moved = true;
            }
        } finally {
            lock.unlock();
        }
        if (moved) {
            // Lettuce's slot map may still name the node that let the slot go (a replica now, which takes the
            // SSUBSCRIBE above and relays its master's messages): a fresh topology subscribes at the owner
            refreshTopologySoon();
        }
    }

    /** Asks for a fresh topology unless one asked for is under way. Any thread; never blocks. */
    private void refreshTopologySoon() {
        if (closed || !refreshing.compareAndSet(false, true)) {
            return;
        }
        try {
            refreshTopology.get().whenComplete((done, error) -> {
                refreshing.set(false);
                if (error != null) {
                    log.debug("refreshing the cluster topology after a shard channel moved failed: {}", error.toString());
                }
                afterRefresh();
            });
        } catch (RuntimeException e) {
            refreshing.set(false);
            log.debug("cannot refresh the cluster topology after a shard channel moved: {}", e.toString());
        }
    }

    /**
     * Runs when a topology read asked for by a slot move ended. Lettuce adopts the view of one node picked at
     * random among those that know every node, so the read may come from a node that has not yet heard of the
     * move, and then changes nothing and publishes no {@link ClusterTopologyChangedEvent}. While a moved
     * channel's slot is still served by the node that let it go in Lettuce's view, reads again with back-off;
     * once a read names a new owner, subscribes there if the event did not already.
     */
    private void afterRefresh() {
        boolean stale = false;
        long delayMillis = 0;
        lock.lock();
        try {
            if (closed) {
                return;
            }
            Partitions view = pubSub.getPartitions();
            for (Map.Entry<String, Channel> entry : channels.entrySet()) {
                Channel wanted = entry.getValue();
                if (wanted.movedFrom == null) {
                    continue;
                }
                RedisClusterNode owner = view.getMasterBySlot(Utf8Codec.slotOf(entry.getKey()));
                if (owner == null || owner.getNodeId().equals(wanted.movedFrom)) {
                    stale = true;
                    continue;
                }
                wanted.movedFrom = null;
                if (!wanted.nodes.contains(owner.getNodeId()) && !wanted.retryScheduled) {
                    wanted.confirmed = false;
                    subscribe(entry.getKey(), wanted, owner);
                }
            }
            if (stale && staleRefreshes < MAX_STALE_REFRESHES) {
                delayMillis = Math.min(FIRST_STALE_REFRESH_MILLIS << staleRefreshes, RetryBackoff.MAX_NANOS / 1_000_000);
                staleRefreshes++;
            } else {
                // beyond that, Lettuce's periodic refresh and a waiter's attempt at the holder's lease end remain
                stale = false;
            }
        } finally {
            lock.unlock();
        }
        if (stale) {
            log.debug("the cluster topology read still names the node a shard channel's slot moved from; "
                    + "reading it again in {} ms", delayMillis);
            try {
                timer.schedule(this::refreshTopologySoon, delayMillis, TimeUnit.MILLISECONDS);
            } catch (RejectedExecutionException e) {
                // the timer shuts down only with the client
            }
        }
    }

    // ---- with lock held ------------------------------------------------------------------------

    /** Sends SSUBSCRIBE to {@code at}, or where Lettuce routes the channel's slot when null. */
    private void subscribe(String channel, Channel wanted, RedisClusterNode at) {
        CompletionStage<Void> reply;
        try {
            reply = at == null ? pubSub.async().ssubscribe(channel)
                    : pubSub.getConnectionAsync(at.getUri().getHost(), at.getUri().getPort())
                            .thenCompose(connection -> connection.async().ssubscribe(channel));
        } catch (RuntimeException e) {
            retryLater(channel, wanted, e);
            return;
        }
        try {
            // async: a reply already there must not run the callback in this thread, under the lock
            reply.whenCompleteAsync((ok, error) -> {
                if (error != null) {
                    subscribeFailed(channel, error);
                }
            }, timer);
        } catch (RejectedExecutionException e) {
            // the timer shuts down only with the client
        }
    }

    private void retryLater(String channel, Channel wanted, Throwable error) {
        if (closed || wanted.retryScheduled) {
            return;
        }
        wanted.retryNanos = RetryBackoff.after(wanted.retryNanos);
        log.debug("subscribing to shard channel {} failed, trying again in {} ms: {}", channel,
                TimeUnit.NANOSECONDS.toMillis(wanted.retryNanos), error.toString());
        try {
            timer.schedule(() -> retry(channel, wanted), wanted.retryNanos, TimeUnit.NANOSECONDS);
            wanted.retryScheduled = true;
        } catch (RejectedExecutionException e) {
            // the timer shuts down only with the client
        }
    }

    private void unsubscribeRouted(String channel) {
        try {
            pubSub.async().sunsubscribe(channel);
        } catch (RuntimeException e) {
            log.debug("cannot unsubscribe shard channel {}: {}", channel, e.toString());
        }
    }

    private void unsubscribeOn(String nodeId, String channel) {
        try {
            pubSub.getConnectionAsync(nodeId)
                    .thenAccept(connection -> connection.async().sunsubscribe(channel))
                    .exceptionally(error -> {
                        log.debug("cannot unsubscribe shard channel {} on node {}: {}", channel, nodeId, error.toString());
                        return null;
                    });
        } catch (RuntimeException e) {
            // the node left the cluster: so did its subscription
            log.debug("cannot unsubscribe shard channel {} on node {}: {}", channel, nodeId, e.toString());
        }
    }

    // ---- timer ---------------------------------------------------------------------------------

    private void subscribeFailed(String channel, Throwable error) {
        lock.lock();
        try {
            Channel wanted = channels.get(channel);
            if (wanted != null && !wanted.confirmed) {
                retryLater(channel, wanted, error);
            }
        } finally {
            lock.unlock();
        }
    }

    private void retry(String channel, Channel scheduled) {
        lock.lock();
        try {
            scheduled.retryScheduled = false;
            // the channel may have been left and joined again meanwhile: act on the current one only
            if (!closed && channels.get(channel) == scheduled && !scheduled.confirmed) {
                subscribe(channel, scheduled, null);
            }
        } finally {
            lock.unlock();
        }
    }

    /** Subscribes again every wanted channel whose slot has a master now that did not confirm it. */
    private void topologyChanged(ClusterTopologyChangedEvent event) {
        Map<String, RedisClusterNode> known = new HashMap<>();
        pubSub.getPartitions().forEach(node -> known.put(node.getNodeId(), node));
        if (event.after().stream().noneMatch(node -> known.containsKey(node.getNodeId()))) {
            // another cluster's client sharing the event bus
            return;
        }
        lock.lock();
        try {
            if (closed) {
                return;
            }
            Set<String> alive = new HashSet<>();
            event.after().stream()
                    .filter(node -> !node.is(RedisClusterNode.NodeFlag.FAIL)
                            && !node.is(RedisClusterNode.NodeFlag.EVENTUAL_FAIL)
                            && !node.is(RedisClusterNode.NodeFlag.NOADDR))
                    .forEach(node -> alive.add(node.getNodeId()));
            for (Map.Entry<String, Channel> entry : channels.entrySet()) {
                int slot = Utf8Codec.slotOf(entry.getKey());
                Channel wanted = entry.getValue();
                // a node that died (or left) ends no subscription by itself: it must not keep counting as one,
                // or the live owner's SUNSUBSCRIBE on a later slot move would leave the set non-empty
                wanted.nodes.retainAll(alive);
                RedisClusterNode owner = event.after().stream()
                        .filter(node -> node.is(RedisClusterNode.NodeFlag.UPSTREAM) && node.hasSlot(slot))
                        .findFirst().orElse(null);
                if (owner != null && !wanted.nodes.contains(owner.getNodeId()) && !wanted.retryScheduled) {
                    log.debug("slot {} of shard channel {} is served by {} now; subscribing there", slot,
                            entry.getKey(), owner.getUri());
                    wanted.confirmed = false;
                    // at that node: the connection's own view may not have changed yet
                    subscribe(entry.getKey(), wanted, owner);
                }
            }
        } finally {
            lock.unlock();
        }
    }
}
