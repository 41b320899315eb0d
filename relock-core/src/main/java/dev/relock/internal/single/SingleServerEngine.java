package dev.relock.internal.single;

import dev.relock.ClientIdentity;
import dev.relock.LeaseLostListener;
import dev.relock.LockInfo;
import dev.relock.RelockClient;
import dev.relock.RelockClientBuilder;
import dev.relock.RelockCondition;
import dev.relock.RelockCountDownLatch;
import dev.relock.RelockMultiLock;
import dev.relock.RelockSemaphore;
import dev.relock.RelockSettings;
import dev.relock.internal.engine.Engine;
import dev.relock.internal.engine.EngineClient;
import dev.relock.internal.engine.EngineLock;
import dev.relock.internal.engine.Hold;
import dev.relock.internal.engine.HoldHandle;
import dev.relock.internal.engine.HoldTable;
import dev.relock.internal.engine.LockKeys;
import dev.relock.internal.engine.LockMode;
import dev.relock.internal.engine.OrderedMultiLock;
import dev.relock.internal.lease.LeaseKeeper;
import dev.relock.internal.metrics.Instrumentation;
import dev.relock.internal.engine.LockEvents;
import dev.relock.internal.redis.RedisCalls;
import dev.relock.internal.script.SingleServerScripts;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisConnectionStateListener;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.RedisClusterClient;
import io.netty.util.Timer;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link Engine} for one Redis (standalone, Sentinel or Cluster), on Lettuce: one multiplexed connection for commands, one pub/sub
 * connection for wake-ups, one {@link LeaseKeeper} thread. The pub/sub connection is subscribed
 * to this client's own wake-up channel, except on a Redis Cluster whose servers have sharded
 * pub/sub (asked once at connect, {@link ServerFeatures}): there scripts SPUBLISH to the lock's own
 * channel in the lock's slot, which the client subscribes to while it waits for that lock
 * ({@link ShardWakeChannels}), so no wake-up is broadcast over the cluster bus. On Redis Cluster
 * the command connection is Lettuce's cluster connection (one socket per node behind it, commands
 * routed by slot); a plain subscription sits on one node of Lettuce's choosing, which plain PUBLISH
 * reaches from every node, and shard channel subscriptions on the slot's node. With a replication guard, fresh
 * acquisitions and their WAITs go over a connection of their own: one to the server, or on
 * Cluster one to each master ({@link ClusterGuardLinks}).
 *
 * <p>A facade over its collaborators, each built here once and never replaced: {@link ServerConnections} (opening
 * and closing), {@link Routes} (which connection a command takes, where wake-ups travel), {@link Releases} (giving
 * holds up, the hand-over to the next holder), {@link HoldExtensions} (re-entry, lease extension),
 * {@link LossReports}, {@link OperatorViews}, {@link IdentityRecord} and {@link MultiLockScript}. The classes of
 * this package that act for a lock ({@link Acquisition}, the conditions, latches and semaphores) reach them through
 * it.
 *
 * <p>Every method may be called from any thread.
 *
 * <p>Public because the builder, in the API package, connects through it.
 */
public final class SingleServerEngine implements Engine {

    private static final Logger log = LoggerFactory.getLogger(SingleServerEngine.class);
    private static final String[] NO_EXTRA_ARGS = {};

    // the client this engine serves: ids, the hold table, loss reporting
    final EngineClient core;
    private final String address;
    private final ScheduledExecutorService timer;
    private final ServerConnections connections;
    // the shared command connection's calls
    private final RedisCalls calls;
    private final Routes routes;
    private final Releases releases;
    private final HoldExtensions extensions;
    private final LossReports losses;
    private final OperatorViews views;
    private final IdentityRecord ownRecord;
    private final MultiLockScript multiLockScript;
    // the client's table
    private final HoldTable holds;
    // the waits for count-down latches; told of their wake-ups by the waiting room
    private final LatchWaits latchWaits = new LatchWaits();
    // the awaits in conditions; told of their signals by the waiting room
    private final ConditionWaits conditionWaits = new ConditionWaits();
    private final WaitingRoom waitingRoom;
    // the threads waiting in the JVM for a write lock another owner of this client holds
    private final LocalLines localLines;
    private final LeaseKeeper leaseKeeper;
    // told by Lettuce of every connection of the Lettuce client that is up (again); removed at close
    private final RedisConnectionStateListener reconnected;
    private final LockEvents events;
    // the handoff grace in ms, as the scripts take it
    private final String graceMillis;
    // the client's default lease, and as the scripts take it: nearly every acquisition asks for it
    private final long defaultLeaseMillis;
    private final String defaultLeaseText;
    // the ids of acquisition attempts, counted from 1; a grant on release names the attempt it answers
    private final AtomicLong attemptIds = new AtomicLong();

    SingleServerEngine(EngineClient core, Instrumentation instrumentation, AbstractRedisClient redisClient,
            boolean ownsRedisClient, String address) {
        this.core = core;
        RelockSettings settings = core.settings();
        this.address = address;
        this.holds = core.holds();
        this.timer = redisClient.getResources().eventExecutorGroup();
        this.localLines = new LocalLines(holds, timer, core.ticker());
        this.losses = new LossReports(core, localLines, timer);
        this.waitingRoom = new WaitingRoom(latchWaits, conditionWaits, losses::forcedOpen);
        this.graceMillis = Long.toString(Math.max(1, settings.handoffGrace().toMillis()));
        this.defaultLeaseMillis = settings.defaultLease().toMillis();
        this.defaultLeaseText = Long.toString(defaultLeaseMillis);
        // before connecting: a node that cannot be reached is reported down, not left out
        this.events = instrumentation.events(List.of(address));
        String wakeChannelPrefix = settings.keyPrefix() + ":wake:";
        this.connections = new ServerConnections(redisClient, ownsRedisClient, address, settings,
                core.identity().connectionName(), wakeChannelPrefix + core.clientId(), waitingRoom, events,
                core.ticker());
        this.calls = connections.calls();
        this.routes = new Routes(connections, wakeChannelPrefix, core.ticker());
        this.releases = new Releases(core, calls, routes, localLines, waitingRoom, losses, timer, this::handOff,
                attemptIds::get, graceMillis);
        this.extensions = new HoldExtensions(core, calls, routes, releases, losses, timer, graceMillis,
                this::leaseText);
        this.views = new OperatorViews(calls, settings.keyPrefix());
        events.nodeConnected(address, connections.connection());
        EvictionPolicyCheck.warnIfLockKeysCanBeEvicted(calls, address);
        // before the keeper, whose passes write the record
        this.ownRecord = new IdentityRecord(core, calls, timer);
        this.multiLockScript = new MultiLockScript(core, calls, routes, events, ownRecord, this::track, timer,
                attemptIds::get, graceMillis);
        this.leaseKeeper = LeaseKeeper.start("relock-lease-keeper", core.clientId(), holds,
                new SingleServerRenewal(core, calls, routes, releases, losses, ownRecord, events),
                Math.max(1, settings.defaultLease().toMillis() / 3), core.ticker());
        register();
        // after a reconnect the keeper renews at once: the outage already used up part of every lease
        this.reconnected = new RedisConnectionStateListener() {
            @Override
            public void onRedisConnected(RedisChannelHandler<?, ?> handler, SocketAddress address) {
                leaseKeeper.renewSoon();
            }
        };
        redisClient.addListener(reconnected);
        log.debug("relock client {} connected to {}", core.clientId(), address);
    }

    /** Called by {@link RelockClientBuilder#build()} with exactly one of redisUri and redisClient. */
    public static RelockClient connect(String redisUri, RedisClient redisClient, RelockSettings settings,
            ClientIdentity identity, List<LeaseLostListener> listeners, Instrumentation instrumentation) {
        return ServerConnector.connect(redisUri, redisClient, settings, identity, listeners, instrumentation);
    }

    /**
     * Called by {@link RelockClientBuilder#build()} for a Redis Cluster, with exactly one of seed
     * URIs and a Lettuce cluster client.
     */
    public static RelockClient connectCluster(List<String> seedUris, RedisClusterClient clusterClient,
            RelockSettings settings, ClientIdentity identity, List<LeaseLostListener> listeners,
            Instrumentation instrumentation) {
        return ServerConnector.connectCluster(seedUris, clusterClient, settings, identity, listeners, instrumentation);
    }

    /** The newer server commands this client found at connect (for tests and diagnostics). */
    public ServerFeatures serverFeatures() {
        return connections.features();
    }

    /** Where this engine connects, as its messages name it. */
    String address() {
        return address;
    }

    // ---- the engine ---------------------------------------------------------------------------

    @Override
    public Acquisition acquisition(String name, LockKeys keys, LockMode mode, String owner, long leaseMillis,
            boolean renewed) {
        // an upgrade is refused before anything is sent (EngineLock), so the scripts refuse nothing here
        return new Acquisition(this, name, keys, mode, owner, leaseMillis, renewed, NO_EXTRA_ARGS,
                code -> new IllegalStateException(mode.description + " '" + name + "': unexpected reply " + code));
    }

    /** See {@link HoldExtensions#reenter}: counted in Redis as well as here, the count here the truth. */
    @Override
    public Hold reenter(Hold held, long lease, boolean renewed) {
        return extensions.reenter(held, lease, renewed);
    }

    @Override
    public void extendLease(Hold hold, long leaseMillis) {
        extensions.extendLease(hold, leaseMillis);
    }

    @Override
    public void checkLease(String lockName, long leaseMillis, String given) {
        // one Redis keeps any positive lease
    }

    /** See {@link Releases#release}. */
    @Override
    public void release(Hold hold, long delayMillis, boolean byHandle) {
        releases.release(hold, delayMillis, byHandle);
    }

    @Override
    public boolean forceUnlock(String name, LockKeys keys) {
        long deleted = calls.await(calls.<Long>run(SingleServerScripts.FORCE_UNLOCK, ScriptOutputType.INTEGER,
                keys.all(), graceMillis, routes.wakeRoute(keys)), "force-unlock", name);
        if (deleted == 1) {
            log.info("lock '{}' was forced open by client {}", name, core.clientId());
        }
        return deleted == 1;
    }

    @Override
    public boolean isLocked(String name, LockKeys keys) {
        return calls.await(calls.commands().exists(keys.lock()), "isLocked", name) == 1;
    }

    @Override
    public Optional<Duration> remainingLease(String name, LockKeys keys) {
        long pttl = calls.await(calls.commands().pttl(keys.lock()), "remainingLease", name);
        return pttl < 0 ? Optional.empty() : Optional.of(Duration.ofMillis(pttl));
    }

    @Override
    public RelockSemaphore semaphore(String name) {
        return new RedisSemaphore(this, name, LockKeys.ofSemaphore(core.settings().keyPrefix(), name));
    }

    @Override
    public RelockCondition condition(String lockName, LockKeys keys, String conditionName) {
        return new RedisCondition(this, lockName, keys, conditionName);
    }

    @Override
    public RelockCountDownLatch countDownLatch(String name) {
        return new RedisCountDownLatch(this, name, LockKeys.latchKey(core.settings().keyPrefix(), name));
    }

    @Override
    public RelockMultiLock multiLock(List<EngineLock> locks) {
        return new OrderedMultiLock(locks, events, leaseMillis -> {
            boolean renewed = leaseMillis == EngineClient.RENEWED;
            return multiLockScript.tryWriteLockAll(locks, renewed ? core.defaultLeaseMillis() : leaseMillis, renewed);
        }, hold -> new HoldHandle(this, hold), core.ticker());
    }

    @Override
    public String topology() {
        return null;
    }

    @Override
    public LockInfo inspect(String name) {
        return views.inspect(name);
    }

    @Override
    public LockInfo inspectSemaphore(String name) {
        return views.inspectSemaphore(name);
    }

    @Override
    public List<LockInfo> list(String nameGlob) {
        return views.list(nameGlob);
    }

    @Override
    public void register() {
        ownRecord.writeWhole();
    }

    @Override
    public Map<String, String> identityRecord(String clientId) {
        return ownRecord.read(clientId);
    }

    @Override
    public Duration ping() {
        long sent = System.nanoTime();
        calls.await(calls.commands().ping(), "ping", null);
        return Duration.ofNanos(System.nanoTime() - sent);
    }

    @Override
    public LockEvents events() {
        return events;
    }

    @Override
    public void close() {
        connections.redisClient().removeListener(reconnected);
        leaseKeeper.close();
        List<CompletableFuture<?>> releasing = new ArrayList<>();
        // withdraw the queued acquisitions while the connection is still open
        IllegalStateException closedNow = core.closedException();
        waitingRoom.forEach((owner, acquisition) -> releasing.add(acquisition.failAtClose(closedNow)));
        // latch and condition waiters find the client closed
        latchWaits.wakeAll();
        conditionWaits.wakeAll();
        // the identity record goes with the client (a crashed client's expires); after any write of it, on the
        // same connection, and no write follows
        releasing.add(ownRecord.delete());
        releases.releaseAllAtClose(releasing);
        try {
            CompletableFuture.allOf(releasing.toArray(CompletableFuture[]::new))
                    .get(core.settings().commandTimeout().toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            log.warn("relock client {}: not every held lock could be released at close; their leases run out"
                    + " by themselves: {}", core.clientId(), e.toString());
        }
        events.close();
        connections.close();
    }

    @Override
    public String toString() {
        return "SingleServerEngine[" + address + "]";
    }

    // ---- for the locks of this client -------------------------------------------------------

    /**
     * Runs the timers of waiting acquisitions: the Lettuce client's event executors, so waiting
     * costs no thread of its own (far timers wait on {@link #wheel} and run here when they fire).
     * Tasks must not block.
     */
    ScheduledExecutorService timer() {
        return timer;
    }

    /** The Lettuce client's hashed wheel timer, which its command timeouts use too: for far timers of waits. */
    Timer wheel() {
        return connections.redisClient().getResources().timer();
    }

    /** Runs {@code task} on an event executor; on the calling thread once they are shut down (the client closed). */
    void handOff(Runnable task) {
        try {
            timer.execute(task);
        } catch (RejectedExecutionException e) {
            task.run();
        }
    }

    /** The calls over the shared command connection. */
    RedisCalls calls() {
        return calls;
    }

    Routes routes() {
        return routes;
    }

    Releases releases() {
        return releases;
    }

    LossReports losses() {
        return losses;
    }

    /** This client's own identity record. */
    IdentityRecord ownRecord() {
        return ownRecord;
    }

    /** A new id for one acquisition attempt; a grant on release names the attempt it answers. */
    long nextAttemptId() {
        return attemptIds.incrementAndGet();
    }

    /** The highest attempt id handed out so far: every attempt sent before now has an id up to it. */
    long lastAttemptId() {
        return attemptIds.get();
    }

    /** The handoff grace in ms, as the scripts take it. */
    String graceMillis() {
        return graceMillis;
    }

    /** A lease in ms as the scripts take it, without a new string for the client's default lease. */
    String leaseText(long leaseMillis) {
        return leaseMillis == defaultLeaseMillis ? defaultLeaseText : Long.toString(leaseMillis);
    }

    LatchWaits latchWaits() {
        return latchWaits;
    }

    ConditionWaits conditionWaits() {
        return conditionWaits;
    }

    WaitingRoom waitingRoom() {
        return waitingRoom;
    }

    LocalLines localLines() {
        return localLines;
    }

    /** A new hold joins the table, and the lease keeper watches its deadline. */
    void track(Hold hold) {
        holds.add(hold);
        leaseKeeper.watch(hold);
    }
}
