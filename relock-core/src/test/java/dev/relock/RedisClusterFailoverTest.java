package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.relock.testredis.RedisCluster;
import dev.relock.testredis.RedisServer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Failovers on a real Redis Cluster of three masters with one replica each: the client follows a
 * promoted replica, a waiter is woken soon after a release that follows a failover (on Redis 7 its shard
 * channel subscription follows its lock's slot to the promoted replica; on 6.2 its own plain channel
 * carries the wake-up), after a coordinated failover and after its master died, and a hold the promoted
 * replica never received is reported lost. Every test leaves the cluster healthy with
 * every node running.
 */
@Tag("redis")
class RedisClusterFailoverTest extends ReplicatedClusterTestBase {

    private static final Duration HANG = RedisClusterTest.HANG;
    private static final Duration LEASE = Duration.ofMillis(1_500);

    @Test
    void heldLockFollowsAPromotedReplica() throws Exception {
        List<LeaseLost> lost = new CopyOnWriteArrayList<>();
        RelockClient client = newClient(b -> b.defaultLease(LEASE).leaseLostListener(lost::add));
        RelockClient other = newClient(UnaryOperator.identity());
        RedisServer master = cluster.masters().get(0);
        String name = nameOn(master, "failover-");
        LockHandle held = client.lock(name).acquire();

        RedisServer promoted = cluster.failover(cluster.replicaOf(master));

        assertThat(promoted.execute("EXISTS", "relock:{" + name + "}")).isEqualTo("1");
        Thread.sleep(2 * LEASE.toMillis()); // on purpose: two leases, kept only by renewals on the new master
        assertThat(lost).isEmpty();
        assertThat(held.isValid()).isTrue();
        assertThat(other.lock(name).tryLock()).isFalse();
        held.close();
        assertThat(other.lock(name).tryLock()).isTrue();
        other.lock(name).unlock();
    }

    @Test
    void waiterIsWokenAtThePromotedReplicaAfterAFailover() throws Exception {
        Waiting waiting = waitOn(cluster.masters().get(0), "failover-wake-");

        // the demoted master unsubscribes its shard channel subscribers; the waiter subscribes again
        // (Redis 6.2: the waiter's own plain channel stays subscribed wherever it is)
        RedisServer promoted = cluster.failover(cluster.replicaOf(waiting.master()));
        if (RedisClusterTest.shardedPubSub(cluster)) {
            await().atMost(HANG).until(() -> RedisClusterTest.shardSubscribers(promoted, waiting.channel()) == 1);
        }

        waiting.assertWokenSoonAfterRelease();
    }

    @Test
    void waiterIsWokenAtThePromotedReplicaAfterItsLocksMasterDied() throws Exception {
        Waiting waiting = waitOn(cluster.masters().get(1), "killed-wake-");
        // the lock and the waiter's queue entry reach the replica before its master dies
        assertThat(waiting.master().execute("WAIT", "1", "5000")).isEqualTo("1");

        // a dead node unsubscribes nobody: the waiter learns of the new master from the topology
        // (Redis 6.2: its own plain channel's subscription must survive the node's death)
        RedisServer promoted = cluster.killMaster(waiting.master());
        if (RedisClusterTest.shardedPubSub(cluster)) {
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> RedisClusterTest.shardSubscribers(promoted, waiting.channel()) == 1);
        }
        // the holder's own Lettuce client learns of the promotion by itself, maybe later than the waiter's
        await().atMost(Duration.ofSeconds(30)).pollInSameThread().ignoreException(RedisUnavailableException.class)
                .until(() -> waiting.holder().inspect(waiting.name()).waiters() == 1);

        waiting.assertWokenSoonAfterRelease();
    }

    @Test
    void waiterIsWokenWhenTheSlotMovesOnAfterItsLocksMasterDied() throws Exception {
        Waiting waiting = waitOn(cluster.masters().get(2), "killed-moved-");
        assertThat(waiting.master().execute("WAIT", "1", "5000")).isEqualTo("1");
        RedisServer promoted = cluster.killMaster(waiting.master());
        boolean sharded = RedisClusterTest.shardedPubSub(cluster);
        if (sharded) {
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> RedisClusterTest.shardSubscribers(promoted, waiting.channel()) == 1);
        }

        // the promoted master ends the subscription when the slot moves on; the dead master never will, and a
        // waiter that still counted it as subscribed would not subscribe at the new owner
        RedisServer target = cluster.masters().stream().filter(master -> master != promoted).findFirst().orElseThrow();
        int slot = RedisCluster.slot(waiting.channel());
        cluster.migrateSlot(slot, target);
        if (sharded) {
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> RedisClusterTest.shardSubscribers(target, waiting.channel()) == 1);
        }
        await().atMost(Duration.ofSeconds(30)).pollInSameThread().ignoreException(RedisUnavailableException.class)
                .until(() -> waiting.holder().inspect(waiting.name()).waiters() == 1);

        waiting.assertWokenSoonAfterRelease();
        // back to the promoted master, so the killed one, once restarted, finds all its slots there and becomes its
        // replica (with a slot elsewhere it could follow that master and leave the promoted one without a replica)
        cluster.migrateSlot(slot, promoted);
    }

    /** A lock held by one client (30 s lease: only a wake-up ends the wait soon) and waited for by another. */
    private record Waiting(RedisServer master, RelockClient holder, String name, String channel, LockHandle held,
            CompletableFuture<LockHandle> waited) {

        /** Releases the lock and checks that the waiter gets it long before any lease could end. */
        void assertWokenSoonAfterRelease() throws Exception {
            assertThat(waited).isNotDone();
            long released = System.nanoTime();
            held.close();
            waited.get(HANG.toMillis(), TimeUnit.MILLISECONDS).close();
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - released)).isLessThan(3_000);
        }
    }

    /** Starts a wait for a lock on {@code master} and returns once the waiter listens on the lock's shard channel. */
    private Waiting waitOn(RedisServer master, String stem) throws Exception {
        RelockClient holder = newClient(UnaryOperator.identity());
        RelockClient waiter = newClient(UnaryOperator.identity());
        String name = nameOn(master, stem);
        String channel = "relock:{" + name + "}:wake";
        LockHandle held = holder.lock(name).acquire();
        CompletableFuture<LockHandle> waited = waiter.lock(name).acquireAsync().toCompletableFuture();
        await().atMost(HANG).until(() -> holder.inspect(name).waiters() == 1);
        if (RedisClusterTest.shardedPubSub(cluster)) {
            await().atMost(HANG).until(() -> RedisClusterTest.shardSubscribers(master, channel) == 1);
        }
        return new Waiting(master, holder, name, channel, held, waited);
    }

    @Test
    void holdThePromotedReplicaNeverSawIsReportedLost() throws Exception {
        List<LeaseLost> lost = new CopyOnWriteArrayList<>();
        RelockClient client = newClient(b -> b.defaultLease(LEASE).leaseLostListener(lost::add));
        RedisServer master = cluster.masters().get(1);
        RedisServer replica = cluster.replicaOf(master);
        String name = nameOn(master, "unreplicated-");

        // Lettuce connects to a node on first use: open the connection to the master first
        client.lock(name).acquire().close();
        replica.pause(); // the acquisition below never reaches it
        LockHandle held = client.lock(name).acquire();
        master.kill();
        replica.resume();
        await().atMost(Duration.ofSeconds(30)).until(() -> cluster.masters().contains(replica));

        LeaseLost event = held.whenLost().toCompletableFuture().get(30, TimeUnit.SECONDS);
        assertThat(event.lockName()).isEqualTo(name);
        assertThat(lost).extracting(LeaseLost::lockName).containsExactly(name);
        assertThat(held.isValid()).isFalse();
        RelockClient other = newClient(UnaryOperator.identity());
        // the promoted replica never had the lock; a new client may first be routed by a seed whose
        // view still names the dead master, until every node has seen the promotion
        await().atMost(Duration.ofSeconds(30)).pollInSameThread().ignoreException(RedisUnavailableException.class)
                .until(() -> other.lock(name).tryLock());
        other.lock(name).unlock();
    }
}
