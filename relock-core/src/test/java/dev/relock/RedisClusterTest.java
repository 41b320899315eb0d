package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.relock.internal.single.ServerFeatures;
import dev.relock.testredis.RedisCluster;
import dev.relock.testredis.RedisServer;
import io.lettuce.core.cluster.RedisClusterClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Every primitive on a real three-master Redis Cluster (no replicas; failover is in
 * {@link RedisClusterFailoverTest}): names on different masters, wake-ups through each lock's shard
 * channel (subscribed only while waiting, followed through a slot migration, never stranding a waiter
 * whose lock was released before its subscription was confirmed), renewals grouped by slot,
 * {@code list} over every master, and a slot migration while a lock is held. After each test no lock
 * hash may be left on any master.
 *
 * <p>The tests check what is true of the servers they run on: on Redis 7 wake-ups travel on shard channels
 * (PUBSUB SHARDNUMSUB shows the subscriptions), on Redis 6.2 (the fixture's embedded binary) on each client's
 * own plain channel, and each test that waits for a wake-up passes on both. A cluster without sharded
 * pub/sub is also in {@link ClusterPlainPubSubFallbackTest}, whatever the default binary is.
 */
@Tag("redis")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RedisClusterTest {

    static final Duration HANG = Duration.ofSeconds(10);

    private RedisCluster cluster;
    private final List<RelockClient> clients = new CopyOnWriteArrayList<>();

    @BeforeAll
    void startCluster() {
        cluster = RedisCluster.builder().masters(3).start();
    }

    /** The major version of the cluster's servers (6 for the fixture's embedded binary). */
    static int majorVersion(RedisCluster cluster) {
        return cluster.nodes().get(0).binary().majorVersion();
    }

    /** Whether the cluster's servers have sharded pub/sub: Redis 7 and later. */
    static boolean shardedPubSub(RedisCluster cluster) {
        return majorVersion(cluster) >= 7;
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
    void waitersListenOnTheirLocksShardChannelOnlyWhileTheyWait() throws Exception {
        RelockClient holder = newClient();
        RelockClient waiter = newClient();
        assertThat(ServerFeatures.of(waiter).shardedPubSub())
                .as("SPUBLISH found at connect (Redis %s)", cluster.nodes().get(0).binary().version())
                .isEqualTo(shardedPubSub(cluster));
        for (RedisServer master : cluster.masters()) {
            // a lock, the read half of a read-write lock, and a semaphore: each wakes through its own channel
            String name = nameOn(master, "wake-");
            LockHandle held = holder.lock(name).acquire(); // 30 s lease: only a wake-up ends the wait soon
            awaitWokenThroughShardChannel(master, lockKey(name) + ":wake",
                    waiter.lock(name).acquireAsync(), () -> holder.inspect(name).waiters() == 1, held::close);

            LockHandle writing = holder.readWriteLock(name).writeLock().acquire();
            awaitWokenThroughShardChannel(master, lockKey(name) + ":wake",
                    waiter.readWriteLock(name).readLock().acquireAsync(),
                    () -> holder.inspect(name).waiters() == 1, writing::close);

            assertThat(holder.semaphore(name).trySetPermits(1)).isTrue();
            PermitHandle permit = holder.semaphore(name).acquire(1);
            awaitWokenThroughShardChannel(master, lockKey(name) + ":sem:wake",
                    waiter.semaphore(name).acquireAsync(1), () -> holder.inspectSemaphore(name).waiters() == 1,
                    permit::close);
        }
    }

    /**
     * With sharded pub/sub: while {@code waited} waits, exactly one subscriber listens on {@code channel} on
     * {@code master} (the slot's node) and no node has a plain wake-up channel, and the subscription is gone
     * after. Without (Redis 6.2): no node has the shard channel's name as a plain channel, and the clients'
     * own plain channels are subscribed. Either way {@code release} wakes it long before any lease ends.
     */
    private void awaitWokenThroughShardChannel(RedisServer master, String channel,
            java.util.concurrent.CompletionStage<? extends AutoCloseable> waited, Callable<Boolean> queued,
            ThrowingRunnable release) throws Exception {
        await().atMost(HANG).until(queued);
        boolean sharded = shardedPubSub(cluster);
        if (sharded) {
            await().atMost(HANG).until(() -> shardSubscribers(master, channel) == 1);
        }
        long plainWakeChannels = 0;
        for (RedisServer node : cluster.nodes()) {
            String plain = node.execute("PUBSUB", "CHANNELS", "relock:wake:*");
            plainWakeChannels += plain.equals("[]") ? 0 : plain.split(", ").length;
            if (sharded && node != master) {
                assertThat(shardSubscribers(node, channel)).as("subscribers on port %d", node.port()).isZero();
            }
        }
        assertThat(plainWakeChannels).as("plain wake channels (sharded pub/sub: %s)", sharded)
                .isEqualTo(sharded ? 0 : clients.size());
        long released = System.nanoTime();
        release.run();
        AutoCloseable taken = waited.toCompletableFuture().get(HANG.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - released))
                .as("ms from the release to the waiter woken (sharded pub/sub: %s)", sharded).isLessThan(3_000);
        if (sharded) {
            await().atMost(HANG).until(() -> shardSubscribers(master, channel) == 0);
        }
        taken.close();
    }

    interface ThrowingRunnable {
        void run() throws Exception;
    }

    /** The subscribers to shard channel {@code channel} on {@code node} (PUBSUB SHARDNUMSUB: Redis 7). */
    static long shardSubscribers(RedisServer node, String channel) {
        String reply = node.execute("PUBSUB", "SHARDNUMSUB", channel); // "[<channel>, <n>]"
        return Long.parseLong(reply.substring(reply.lastIndexOf(", ") + 2, reply.length() - 1));
    }

    /** Calls of {@code command} the node has served so far (INFO commandstats). */
    private static long calls(RedisServer node, String command) {
        return node.execute("INFO", "commandstats").lines()
                .filter(line -> line.startsWith("cmdstat_" + command + ":")).findFirst()
                .map(line -> Long.parseLong(line.replaceAll("^cmdstat_[a-z]+:calls=(\\d+),.*", "$1"))).orElse(0L);
    }

    @Test
    void uncontendedAcquisitionIsOneScriptCallAndSubscribesNothing() throws Exception {
        RelockClient client = newClient();
        RedisServer master = cluster.masters().get(1);
        String name = nameOn(master, "quiet-");
        client.lock(name).acquire().close(); // opens the connection to the master (the first may load the script)
        try (ScriptCount scriptCalls = ScriptCount.of(master)) {
            long scripts = scriptCalls.scriptsSoFar();
            long subscribes = cluster.masters().stream().mapToLong(node -> calls(node, "ssubscribe")).sum();
            assertThat(client.lock(name).tryLock(5, TimeUnit.SECONDS)).isTrue(); // may wait, but need not
            assertThat(scriptCalls.scriptsSoFar()).as("script calls").isEqualTo(scripts + 1);
            client.lock(name).unlock();
            assertThat(cluster.masters().stream().mapToLong(node -> calls(node, "ssubscribe")).sum())
                    .as("SSUBSCRIBE calls").isEqualTo(subscribes);
        }
    }

    @Test
    void waiterIsWokenAtTheNewOwnerAfterItsSlotMoved() throws Exception {
        RelockClient holder = newClient();
        RelockClient waiter = newClient();
        RedisServer source = cluster.masters().get(0);
        RedisServer target = cluster.masters().get(2);
        String name = nameOn(source, "moved-wake-");
        String channel = lockKey(name) + ":wake";
        int slot = RedisCluster.slot(lockKey(name));
        boolean sharded = shardedPubSub(cluster);
        LockHandle held = holder.lock(name).acquire(); // 30 s lease: only a wake-up ends the wait soon
        CompletableFuture<LockHandle> waited = waiter.lock(name).acquireAsync().toCompletableFuture();
        await().atMost(HANG).until(() -> holder.inspect(name).waiters() == 1);
        if (sharded) {
            await().atMost(HANG).until(() -> shardSubscribers(source, channel) == 1);
        }

        // the waiter waits through the whole migration; the source unsubscribes it when the slot leaves
        // (sharded pub/sub), or its own channel's subscription stays where it is (plain)
        cluster.beginSlotMigration(slot, target);
        assertThat(waited).isNotDone();
        cluster.finishSlotMigration(slot, target);
        if (sharded) {
            await().atMost(HANG).until(() -> shardSubscribers(target, channel) == 1);
            assertThat(shardSubscribers(source, channel)).isZero();
        }

        long released = System.nanoTime();
        held.close();
        LockHandle taken = waited.get(HANG.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - released)).isLessThan(3_000);

        // and after the migration: a new wait subscribes at the new owner at once
        CompletableFuture<LockHandle> next = holder.lock(name).acquireAsync().toCompletableFuture();
        await().atMost(HANG).until(() -> holder.inspect(name).waiters() == 1);
        if (sharded) {
            await().atMost(HANG).until(() -> shardSubscribers(target, channel) == 1);
        }
        released = System.nanoTime();
        taken.close();
        next.get(HANG.toMillis(), TimeUnit.MILLISECONDS).close();
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - released)).isLessThan(3_000);
        if (sharded) {
            await().atMost(HANG).until(() -> shardSubscribers(target, channel) == 0);
        }
        // back where it was, for the other tests
        cluster.migrateSlot(slot, source);
    }

    @Test
    void aReleaseBeforeTheWaitersSubscriptionIsConfirmedDoesNotStrandIt() throws Exception {
        RelockClient one = newClient();
        RelockClient two = newClient();
        String name = nameOn(cluster.masters().get(0), "race-");
        RelockClient holder = one;
        RelockClient waiter = two;
        LockHandle held = holder.lock(name).acquire(); // 30 s leases: a stranded waiter would blow the bound
        for (int round = 0; round < 100; round++) {
            CompletableFuture<LockHandle> waited = waiter.lock(name).acquireAsync().toCompletableFuture();
            RelockClient releasing = holder;
            // released as soon as the waiter is queued: mostly before its SSUBSCRIBE is confirmed
            await().atMost(HANG).pollInterval(Duration.ofMillis(1)).until(() -> releasing.inspect(name).waiters() == 1);
            held.close();
            held = waited.get(HANG.toMillis(), TimeUnit.MILLISECONDS);
            holder = waiter;
            waiter = releasing;
        }
        held.close();
    }

    @Test
    void threeClientsContendingForOneLockNeverOverlap() throws Exception {
        int clients = 3;
        int threadsPerClient = 2;
        int rounds = 40;
        String name = nameOn(cluster.masters().get(1), "contended-");
        Contention contention = new Contention();
        long[] counter = {0};
        List<CompletableFuture<Void>> workers = new ArrayList<>();
        for (int c = 0; c < clients; c++) {
            RelockLock lock = newClient().lock(name);
            for (int t = 0; t < threadsPerClient; t++) {
                workers.add(CompletableFuture.runAsync(() -> {
                    for (int i = 0; i < rounds; i++) {
                        try (LockHandle held = lock.acquire()) {
                            contention.criticalSection(held.fencingToken(), () -> counter[0]++);
                        }
                    }
                }, runnable -> new Thread(runnable, "contender").start()));
            }
        }
        // 30 s leases: a lost wake-up would stall a waiter far past this bound
        CompletableFuture.allOf(workers.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
        int expected = clients * threadsPerClient * rounds;
        assertThat(contention.overlaps).as("critical sections entered while another was inside").hasValue(0);
        assertThat(counter[0]).isEqualTo(expected);
        assertThat(contention.tokens()).hasSize(expected).isSorted().doesNotHaveDuplicates();
        if (shardedPubSub(cluster)) {
            await().atMost(HANG).until(
                    () -> shardSubscribers(cluster.masterFor(lockKey(name)), lockKey(name) + ":wake") == 0);
        }
    }

    @Test
    void manyHoldsOverAllSlotsAreRenewedSlotBySlot() throws Exception {
        // about one hold per slot: one renewal script per hold and pass, pipelined per node. With a
        // 2 s lease (a pass every 667 ms, deadline at 1.93 s) one CI-like run at a load average of 6
        // told a few dozen holders their renewal came too late; 4 s leaves a pass's worth of slack
        Duration lease = Duration.ofMillis(4_000);
        List<LeaseLost> lost = new CopyOnWriteArrayList<>();
        RelockClient client = newClient(b -> b.defaultLease(lease).leaseLostListener(lost::add));
        List<LockHandle> held = new ArrayList<>();
        for (int i = 0; i < 1_500; i++) {
            held.add(client.lock("spread:" + i).acquire());
        }
        // connected before the holds must prove themselves: a connect on a loaded machine may take
        // longer than the gap between a holder's deadline and Redis's expiry
        RelockClient other = newClient();
        Thread.sleep(2 * lease.toMillis()); // on purpose: two leases, kept only by renewals
        List<String> takenByOther = new ArrayList<>();
        for (int i = 0; i < 1_500; i += 97) {
            if (other.lock("spread:" + i).tryLock()) {
                takenByOther.add("spread:" + i);
            }
        }
        assertThat(lost).as("leases lost; taken by the other client: %s", takenByOther).isEmpty();
        assertThat(takenByOther).isEmpty();
        assertThat(held).allMatch(LockHandle::isValid);
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
    void aSlotHeldInMigrationNeitherFailsALockCallNorLosesAHold() throws Exception {
        // a slot stays MIGRATING (source) and IMPORTING (target) with no key moved, as when a resharding stalls:
        // the source runs a script only if it has every key the script declares, so most answer TRYAGAIN
        Duration lease = Duration.ofSeconds(3);
        UnaryOperator<RelockClientBuilder> settings = builder -> builder.defaultLease(lease)
                .commandTimeout(Duration.ofSeconds(1));
        String name = nameOn(cluster.masters().get(0), "migrating-");
        String other = nameInSlotOf(name, "migrating-other-");
        int slot = RedisCluster.slot(lockKey(name));
        RedisServer source = cluster.masterForSlot(slot);
        RedisServer target = cluster.masters().get(1);
        RelockClient holder = newClient(settings);
        LockHandle held = holder.lock(name).acquire();
        LockHandle reading = holder.readWriteLock(other).readLock().acquire();

        cluster.beginSlotMigration(slot, target);
        CompletableFuture<Void> waiter = CompletableFuture.runAsync(() -> {
            RelockLock lock = newClient(settings).lock(name);
            lock.lock();
            lock.unlock();
        }, runnable -> new Thread(runnable, "migrating-waiter").start());
        // two leases: the holds are renewed (only their own keys declared), and lock() keeps trying
        await().during(lease.multipliedBy(2)).atMost(lease.multipliedBy(3))
                .until(() -> held.state() == LeaseState.HELD && reading.state() == LeaseState.HELD && !waiter.isDone());

        cluster.finishSlotMigration(slot, target);
        held.close();
        reading.close();
        waiter.get(HANG.toMillis(), TimeUnit.MILLISECONDS);
        // back where it was, for the other tests
        cluster.migrateSlot(slot, source);
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
        if (majorVersion(cluster) >= 7) {
            // Redis 6.2 answers these scripts ASK (or, for a key that left from inside a script, an error),
            // never TRYAGAIN: seen in its INFO errorstats
            assertThat(source.execute("INFO", "errorstats")).as("TRYAGAIN answered by the source")
                    .contains("errorstat_TRYAGAIN");
        }
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
