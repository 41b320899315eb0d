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
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Failovers on a real Redis Cluster of three masters with one replica each: the client follows a
 * promoted replica, its wake-up subscription survives the loss of its node, and a hold the
 * promoted replica never received is reported lost. Every test leaves the cluster healthy with
 * every node running.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RedisClusterFailoverTest {

    private static final Duration HANG = RedisClusterTest.HANG;
    private static final Duration LEASE = Duration.ofMillis(1_500);

    private RedisCluster cluster;
    private final List<RelockClient> clients = new CopyOnWriteArrayList<>();

    @BeforeAll
    void startCluster() {
        cluster = RedisCluster.builder().masters(3).replicasPerMaster(1).start();
    }

    @AfterAll
    void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @AfterEach
    void closeClientsAndHeal() {
        clients.forEach(RelockClient::close);
        clients.clear();
        for (RedisServer node : cluster.nodes()) {
            if (node.isPaused()) {
                node.resume();
            }
            if (!node.isRunning()) {
                node.restart();
            }
        }
        cluster.awaitHealthy();
        cluster.masters().forEach(RedisServer::flushAll);
    }

    private RelockClient newClient(UnaryOperator<RelockClientBuilder> settings) {
        RelockClient client = settings.apply(RelockClient.builder().redisClusterUris(cluster.seedUri())).build();
        clients.add(client);
        return client;
    }

    private String nameOn(RedisServer master, String stem) {
        for (int i = 0; ; i++) {
            if (cluster.masterFor("relock:{" + stem + i + "}") == master) {
                return stem + i;
            }
        }
    }

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
    void wakeUpsArriveAfterTheSubscribedNodeDied() throws Exception {
        RelockClient waiter = newClient(UnaryOperator.identity());
        RelockClient holder = newClient(UnaryOperator.identity());
        String channel = "relock:wake:" + waiter.clientId();
        RedisServer subscribedOn = subscriberOf(channel);
        if (cluster.masters().contains(subscribedOn)) {
            // demoted first, so no slot waits for an election after the kill
            cluster.failover(cluster.replicaOf(subscribedOn));
        }
        subscribedOn.kill();
        // Lettuce reconnects to another node and subscribes again
        await().atMost(HANG).until(() -> {
            RedisServer now = subscriberOf(channel);
            return now != null && now != subscribedOn;
        });

        String name = nameOn(cluster.masters().get(0), "after-kill-");
        LockHandle held = holder.lock(name).acquire(); // 30 s lease: only a wake-up ends the wait soon
        CompletableFuture<LockHandle> waited = waiter.lock(name).acquireAsync().toCompletableFuture();
        await().atMost(HANG).until(() -> holder.inspect(name).waiters() == 1);
        long released = System.nanoTime();
        held.close();
        waited.get(HANG.toMillis(), TimeUnit.MILLISECONDS).close();
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - released)).isLessThan(3_000);
    }

    /** The running node with a subscriber on {@code channel}, or null. */
    private RedisServer subscriberOf(String channel) {
        return cluster.nodes().stream().filter(node -> node.isRunning() && !node.isPaused())
                .filter(node -> node.execute("PUBSUB", "CHANNELS", channel).contains(channel))
                .findFirst().orElse(null);
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
