package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.relock.testredis.RedisCluster;
import dev.relock.testredis.RedisServer;
import io.lettuce.core.cluster.RedisClusterClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
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
 * Every primitive on a real three-master Redis Cluster (no replicas; failover is in
 * {@link RedisClusterFailoverTest}): names on different masters, wake-ups across nodes, renewals
 * grouped by slot, {@code list} over every master, and a slot migration while a lock is held.
 * After each test no lock hash may be left on any master.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RedisClusterTest {

    static final Duration HANG = Duration.ofSeconds(10);

    private RedisCluster cluster;
    private final List<RelockClient> clients = new CopyOnWriteArrayList<>();

    @BeforeAll
    void startCluster() {
        cluster = RedisCluster.builder().masters(3).start();
    }

    @AfterAll
    void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @AfterEach
    void closeClientsAndCheckNothingIsLeft() {
        clients.forEach(RelockClient::close);
        clients.clear();
        List<String> left = new ArrayList<>();
        for (RedisServer master : cluster.masters()) {
            String keys = master.execute("KEYS", "relock:*");
            for (String key : keys.substring(1, keys.length() - 1).split(", ")) {
                // lock hashes are "<prefix>:{<name>}"; queue, expiry and fence keys carry a suffix
                if (key.endsWith("}") && "hash".equals(master.execute("TYPE", key))) {
                    left.add(key);
                }
            }
            master.flushAll();
        }
        assertThat(left).as("lock hashes left after every client closed").isEmpty();
    }

    private RelockClient newClient(UnaryOperator<RelockClientBuilder> settings) {
        RelockClient client = settings.apply(RelockClient.builder()
                .redisClusterUris(cluster.uris().toArray(String[]::new))).build();
        clients.add(client);
        return client;
    }

    private RelockClient newClient() {
        return newClient(UnaryOperator.identity());
    }

    /** A lock name whose keys live on {@code master}: {@code stem} plus a number. */
    private String nameOn(RedisServer master, String stem) {
        for (int i = 0; ; i++) {
            String name = stem + i;
            if (cluster.masterFor(lockKey(name)) == master) {
                return name;
            }
        }
    }

    /** Another name whose keys are in the same slot as {@code name}'s. */
    private static String nameInSlotOf(String name, String stem) {
        int slot = RedisCluster.slot(lockKey(name));
        for (int i = 0; ; i++) {
            String other = stem + i;
            if (!other.equals(name) && RedisCluster.slot(lockKey(other)) == slot) {
                return other;
            }
        }
    }

    private static String lockKey(String name) {
        return "relock:{" + name + "}";
    }

    @Test
    void exclusiveLockKeepsOutOtherClientsAndLivesOnItsSlotsMaster() throws Exception {
        RelockClient first = newClient();
        RelockClient second = newClient();
        for (RedisServer master : cluster.masters()) {
            String name = nameOn(master, "orders-");
            LockHandle held = first.lock(name).acquire();
            assertThat(master.execute("EXISTS", lockKey(name))).isEqualTo("1");
            assertThat(second.lock(name).tryLock()).isFalse();
            assertThat(second.inspect(name).holders()).containsOnlyKeys(first.heldLocks().get(0).owner());
            held.close();
            Optional<LockHandle> next = second.lock(name).tryAcquire(HANG);
            assertThat(next).isPresent();
            assertThat(next.get().fencingToken()).isGreaterThan(held.fencingToken());
            next.get().close();
        }
    }

    @Test
    void readWriteLockSharesReadsAndExcludesWrites() throws Exception {
        RelockClient first = newClient();
        RelockClient second = newClient();
        String name = nameOn(cluster.masters().get(1), "doc-");
        LockHandle read = first.readWriteLock(name).readLock().acquire();
        LockHandle otherRead = second.readWriteLock(name).readLock().tryAcquire(Duration.ZERO).orElseThrow();
        assertThat(newClient().readWriteLock(name).writeLock().tryLock()).isFalse();
        read.close();
        otherRead.close();
        LockHandle write = second.readWriteLock(name).writeLock().tryAcquire(HANG).orElseThrow();
        assertThat(first.readWriteLock(name).readLock().tryLock()).isFalse();
        write.close();
    }

    @Test
    void semaphoreHandsOutItsPermitsOnly() throws Exception {
        RelockClient first = newClient();
        RelockClient second = newClient();
        String name = nameOn(cluster.masters().get(2), "pool-");
        assertThat(first.semaphore(name).trySetPermits(2)).isTrue();
        PermitHandle one = first.semaphore(name).acquire(1);
        PermitHandle two = second.semaphore(name).acquire(1);
        assertThat(second.semaphore(name).tryAcquire(1, Duration.ZERO)).isEmpty();
        one.close();
        PermitHandle three = second.semaphore(name).tryAcquire(1, HANG).orElseThrow();
        two.close();
        three.close();
    }

    @Test
    void multiLockTakesNamesOnEveryMasterAndNamesInOneSlot() throws Exception {
        RelockClient first = newClient();
        RelockClient second = newClient();
        List<String> spread = cluster.masters().stream().map(master -> nameOn(master, "account-")).toList();
        MultiLockHandle all = first.multiLock(spread.toArray(String[]::new)).acquire();
        assertThat(all.fencingTokens()).containsOnlyKeys(spread);
        for (String name : spread) {
            assertThat(second.lock(name).tryLock()).as(name).isFalse();
        }
        assertThat(second.multiLock(spread.toArray(String[]::new)).tryLock(50, TimeUnit.MILLISECONDS)).isFalse();
        all.close();
        assertThat(second.multiLock(spread.toArray(String[]::new)).tryLock()).isTrue();
        second.multiLock(spread.toArray(String[]::new)).unlock();

        // two names that share a slot go through the one-script path
        String one = spread.get(0);
        String sameSlot = nameInSlotOf(one, "twin-");
        MultiLockHandle twins = first.multiLock(one, sameSlot).acquire();
        assertThat(second.lock(sameSlot).tryLock()).isFalse();
        twins.close();
    }

    @Test
    void waiterIsWokenByAReleaseOnAnotherNode() throws Exception {
        RelockClient holder = newClient();
        RelockClient waiter = newClient();
        RedisServer subscribedOn = nodeSubscribedFor(waiter);
        RedisServer lockNode = cluster.masters().stream().filter(master -> master != subscribedOn)
                .findFirst().orElseThrow();
        String name = nameOn(lockNode, "wake-");
        LockHandle held = holder.lock(name).acquire(); // 30 s lease: only a wake-up ends the wait soon
        CompletableFuture<LockHandle> waited = waiter.lock(name).acquireAsync().toCompletableFuture();
        await().atMost(HANG).until(() -> holder.inspect(name).waiters() == 1);
        long released = System.nanoTime();
        held.close();
        LockHandle taken = waited.get(HANG.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - released))
                .as("ms from release on port %d to the waiter subscribed on port %d", lockNode.port(),
                        subscribedOn.port())
                .isLessThan(3_000);
        taken.close();
    }

    /** The node whose PUBSUB CHANNELS lists the client's wake-up channel. */
    private RedisServer nodeSubscribedFor(RelockClient client) {
        String channel = "relock:wake:" + client.clientId();
        return cluster.nodes().stream().filter(RedisServer::isRunning)
                .filter(node -> node.execute("PUBSUB", "CHANNELS", channel).contains(channel))
                .findFirst().orElseThrow(() -> new AssertionError("no node has a subscriber on " + channel));
    }

    @Test
    void manyHoldsOverAllSlotsAreRenewedSlotBySlot() throws Exception {
        // about one hold per slot: one renewal script per hold and pass, pipelined per node
        Duration lease = Duration.ofMillis(2_000);
        List<LeaseLost> lost = new CopyOnWriteArrayList<>();
        RelockClient client = newClient(b -> b.defaultLease(lease).leaseLostListener(lost::add));
        List<LockHandle> held = new ArrayList<>();
        for (int i = 0; i < 1_500; i++) {
            held.add(client.lock("spread:" + i).acquire());
        }
        Thread.sleep(2 * lease.toMillis()); // on purpose: two leases, kept only by renewals
        assertThat(lost).isEmpty();
        assertThat(held).allMatch(LockHandle::isValid);
        RelockClient other = newClient();
        for (int i = 0; i < 1_500; i += 97) {
            assertThat(other.lock("spread:" + i).tryLock()).as("spread:" + i).isFalse();
        }
        held.forEach(LockHandle::close);
    }

    @Test
    void listFindsLocksOnEveryMaster() throws Exception {
        RelockClient client = newClient();
        List<LockHandle> held = new ArrayList<>();
        List<String> names = new ArrayList<>();
        for (RedisServer master : cluster.masters()) {
            String name = nameOn(master, "listed-");
            names.add(name);
            held.add(client.lock(name).acquire());
        }
        assertThat(client.semaphore("listed-pool").trySetPermits(3)).isTrue();
        assertThat(client.list("listed-*")).extracting(LockInfo::name)
                .containsExactlyElementsOf(sorted(names, "listed-pool"));
        held.forEach(LockHandle::close);
    }

    private static List<String> sorted(List<String> names, String extra) {
        List<String> all = new ArrayList<>(names);
        all.add(extra);
        all.sort(null);
        return all;
    }

    @Test
    void heldLockFollowsItsSlotThroughAMigration() throws Exception {
        Duration lease = Duration.ofMillis(900);
        List<LeaseLost> lost = new CopyOnWriteArrayList<>();
        RelockClient client = newClient(b -> b.defaultLease(lease).leaseLostListener(lost::add));
        RelockClient other = newClient();
        RedisServer source = cluster.masters().get(0);
        RedisServer target = cluster.masters().get(1);
        String name = nameOn(source, "moving-");
        int slot = RedisCluster.slot(lockKey(name));
        LockHandle held = client.lock(name).acquire();

        cluster.beginSlotMigration(slot, target);
        // ASK: a fresh lock in the migrating slot; TRYAGAIN: scripts on the held lock meanwhile
        String twin = nameInSlotOf(name, "moving-twin-");
        CompletableFuture<LockHandle> duringMigration = client.lock(twin).acquireAsync().toCompletableFuture();
        Thread.sleep(lease.toMillis() / 2); // on purpose: a renewal falls into the migration
        cluster.finishSlotMigration(slot, target);
        assertThat(source.execute("INFO", "errorstats")).as("TRYAGAIN answered by the source")
                .contains("errorstat_TRYAGAIN");
        assertThat(target.execute("INFO", "commandstats")).as("ASK followed to the target")
                .contains("cmdstat_asking");

        assertThat(target.execute("EXISTS", lockKey(name))).isEqualTo("1");
        LockHandle twinHeld = duringMigration.get(HANG.toMillis(), TimeUnit.MILLISECONDS);
        Thread.sleep(2 * lease.toMillis()); // on purpose: renewals now get MOVED, then go to the target
        assertThat(lost).isEmpty();
        assertThat(held.isValid()).isTrue();
        assertThat(other.lock(name).tryLock()).isFalse();
        held.close();
        twinHeld.close();
        assertThat(other.lock(name).tryLock()).isTrue();
        other.lock(name).unlock();
        // back where it was, for the other tests
        cluster.migrateSlot(slot, source);
    }

    @Test
    void builderRejectsAmbiguousOrEmptyClusterSettings() {
        assertThatThrownBy(() -> RelockClient.builder().redisClusterUris())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least one");
        assertThatThrownBy(() -> RelockClient.builder().redisClusterUris((String) null))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("redisClusterUris[0]");
        assertThatThrownBy(() -> RelockClient.builder().redisClusterUris(cluster.seedUri())
                .redisUri(cluster.seedUri()).build())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("[redisUri, redisClusterUris]");
        assertThatThrownBy(() -> RelockClient.builder().build())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("none was set");
        assertThatThrownBy(() -> RelockClient.builder().redisClusterUris("not a uri:://x").build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("redisClusterUris");
        assertThatThrownBy(() -> RelockClient.builder()
                .redisClusterUris("redis-sentinel://127.0.0.1:1#mymaster").build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not of Sentinels");
    }

    @Test
    void callersLettuceClusterClientIsUsedAndLeftOpen() throws Exception {
        RedisClusterClient lettuce = RedisClusterClient.create(cluster.seedUri());
        try {
            RelockClient client = RelockClient.builder().redisClusterClient(lettuce).build();
            String name = nameOn(cluster.masters().get(2), "theirs-");
            try (LockHandle held = client.lock(name).acquire()) {
                assertThat(client.list("theirs-*")).extracting(LockInfo::name).containsExactly(name);
            }
            client.close();
            // still usable by its owner after relock closed
            assertThat(lettuce.connect().sync().ping()).isEqualTo("PONG");
        } finally {
            lettuce.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }
}
