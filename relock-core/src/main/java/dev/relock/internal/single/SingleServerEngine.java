package dev.relock.internal.single;

import dev.relock.ClientIdentity;
import dev.relock.LeaseLostException;
import dev.relock.LeaseLostListener;
import dev.relock.LeaseState;
import dev.relock.LockInfo;
import dev.relock.LockKind;
import dev.relock.RedisUnavailableException;
import dev.relock.RelockClient;
import dev.relock.RelockClientBuilder;
import dev.relock.RelockException;
import dev.relock.RelockCondition;
import dev.relock.RelockCountDownLatch;
import dev.relock.RelockMultiLock;
import dev.relock.RelockSemaphore;
import dev.relock.RelockSettings;
import dev.relock.ReplicationGuard;
import dev.relock.ReplicationShortfallException;
import dev.relock.internal.engine.ClientRegistry;
import dev.relock.internal.engine.Engine;
import dev.relock.internal.engine.EngineClient;
import dev.relock.internal.engine.EngineLock;
import dev.relock.internal.engine.Hold;
import dev.relock.internal.engine.HoldHandle;
import dev.relock.internal.engine.HoldTable;
import dev.relock.internal.engine.IoThreads;
import dev.relock.internal.engine.LockKeys;
import dev.relock.internal.engine.LockMode;
import dev.relock.internal.engine.OrderedMultiLock;
import dev.relock.internal.engine.RecordWrites;
import dev.relock.internal.engine.RedisConnections;
import dev.relock.internal.engine.Utf8Codec;
import dev.relock.internal.lease.LeaseKeeper;
import dev.relock.internal.metrics.Instrumentation;
import dev.relock.internal.metrics.LockEvents;
import dev.relock.internal.script.LuaScript;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisConnectionStateListener;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.pubsub.StatefulRedisClusterPubSubConnection;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.netty.util.Timer;
import java.net.SocketAddress;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.ToLongFunction;
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
 * <p>Every method may be called from any thread.
 *
 * <p>Public because the builder, in the API package, connects through it.
 */
public final class SingleServerEngine implements Engine {

    private static final Logger log = LoggerFactory.getLogger(SingleServerEngine.class);
    private static final String[] NO_EXTRA_ARGS = {};
    // refreshIfUnreachable asks for a fresh Cluster topology at most this often
    private static final long UNREACHABLE_REFRESH_NANOS = TimeUnit.SECONDS.toNanos(1);

    // the client this engine serves: ids, the hold table, loss reporting
    final EngineClient core;
    private final RelockSettings settings;
    private final String address;
    private final AbstractRedisClient redisClient;
    // System.nanoTime() of the last topology refresh asked for by refreshIfUnreachable
    private final AtomicLong lastUnreachableRefresh = new AtomicLong(System.nanoTime() - UNREACHABLE_REFRESH_NANOS);
    private final boolean ownsRedisClient;
    // a Redis Cluster client: keys are routed by slot, and one script may touch one slot only
    private final boolean cluster;
    private final StatefulConnection<String, String> connection;
    private final StatefulRedisPubSubConnection<String, String> pubSub;
    private final RedisCalls calls;
    // held while a renewal batch or a release is handed to Lettuce (SingleServerRenewal.send, release): orders
    // them on the connection, so no renewal follows the release of a hold it renews. Releases that go over a
    // replication guard's connection are not ordered with renewals by it: the scripts refuse to lengthen a hold
    // given up with a delay (renew.lua), and a plain release leaves nothing to renew
    final ReentrantLock dispatch = new ReentrantLock();
    // the writes of the identity record and its delete at close, in that order, on the command connection
    private final RecordWrites recordWrites;
    // with a replication guard on a single Redis or Sentinel: a connection of its own for
    // acquisitions and their WAITs, which block it; otherwise null, and acquisitions use the shared one
    private final StatefulRedisConnection<String, String> guarded;
    private final CompletableFuture<RedisCalls> guardedCalls;
    // with a replication guard on Cluster: one such connection per master, else null
    private final ClusterGuardLinks guardLinks;
    // the client's table
    private final HoldTable holds;
    // the waits for count-down latches; told of their wake-ups by the waiting room
    private final LatchWaits latchWaits = new LatchWaits();
    // the awaits in conditions; told of their signals by the waiting room
    private final ConditionWaits conditionWaits = new ConditionWaits();
    private final WaitingRoom waitingRoom = new WaitingRoom(latchWaits, conditionWaits, this::forcedOpen);
    // the threads waiting in the JVM for a write lock another owner of this client holds
    private final LocalLines localLines;
    private final LeaseKeeper leaseKeeper;
    // told by Lettuce of every connection of redisClient that is up (again); removed at close
    private final RedisConnectionStateListener reconnected;
    private final LockEvents events;
    // the newer commands the server offers, asked once at connect
    private final ServerFeatures features;
    // on a Cluster with sharded pub/sub: the lock channels waiters listen to; otherwise null, and
    // wake-ups come on the client's own channel, wakeChannelPrefix + client id
    private final ShardWakeChannels shardChannels;
    private final String wakeChannelPrefix;
    private final String graceMillis;
    // the client's default lease, and as the scripts take it: nearly every acquisition asks for it
    private final long defaultLeaseMillis;
    private final String defaultLeaseText;
    private final AtomicLong attemptIds = new AtomicLong();

    private SingleServerEngine(EngineClient core, Instrumentation instrumentation, AbstractRedisClient redisClient,
            boolean ownsRedisClient, String address) {
        this.core = core;
        this.settings = core.settings();
        this.address = address;
        this.holds = core.holds();
        // timer() only once the Lettuce client is set
        this.localLines = new LocalLines(holds, command -> timer().execute(command));
        this.redisClient = redisClient;
        this.ownsRedisClient = ownsRedisClient;
        this.cluster = redisClient instanceof RedisClusterClient;
        this.wakeChannelPrefix = settings.keyPrefix() + ":wake:";
        this.graceMillis = Long.toString(Math.max(1, settings.handoffGrace().toMillis()));
        this.defaultLeaseMillis = settings.defaultLease().toMillis();
        this.defaultLeaseText = Long.toString(defaultLeaseMillis);
        // before connecting: a node that cannot be reached is reported down, not left out
        this.events = LockEvents.of(instrumentation, List.of(address));
        StatefulConnection<String, String> commands = null;
        StatefulRedisPubSubConnection<String, String> wakeUps = null;
        StatefulRedisConnection<String, String> forGuard = null;
        ShardWakeChannels sharded = null;
        try {
            RedisClusterAsyncCommands<String, String> async;
            if (redisClient instanceof RedisClusterClient clusterClient) {
                StatefulRedisClusterConnection<String, String> routed = clusterClient.connect(Utf8Codec.INSTANCE);
                commands = routed;
                async = routed.async();
                wakeUps = clusterClient.connectPubSub(Utf8Codec.INSTANCE);
            } else {
                RedisClient plain = (RedisClient) redisClient;
                StatefulRedisConnection<String, String> single = plain.connect(Utf8Codec.INSTANCE);
                commands = single;
                async = single.async();
                wakeUps = plain.connectPubSub(Utf8Codec.INSTANCE);
            }
            commands.setTimeout(settings.commandTimeout());
            wakeUps.setTimeout(settings.commandTimeout());
            wakeUps.addListener(waitingRoom);
            this.calls = callsOn(commands, async, redisClient, settings, address);
            // ---- how wake-ups travel, decided once: sharded pub/sub on a Cluster that has it, so no
            // wake-up is broadcast to every node; otherwise plain pub/sub on this client's own channel
            // (one node: nothing to gain; on Cluster every node forwards PUBLISH to every other)
            this.features = ServerFeatures.probe(calls, address);
            if (wakeUps instanceof StatefulRedisClusterPubSubConnection<String, String> clusterPubSub
                    && features.shardedPubSub()) {
                sharded = new ShardWakeChannels(clusterPubSub, redisClient.getResources().eventBus(), timer(),
                        ((RedisClusterClient) redisClient)::refreshPartitionsAsync);
            } else {
                calls.await(wakeUps.async().subscribe(wakeChannelPrefix + core.clientId()), "subscribe", null);
            }
            this.shardChannels = sharded;
            // ----
            if (settings.replicationGuard() != null && !cluster) {
                forGuard = ((RedisClient) redisClient).connect(Utf8Codec.INSTANCE);
                forGuard.setTimeout(settings.commandTimeout());
                this.guardedCalls = CompletableFuture.completedFuture(
                        callsOn(forGuard, forGuard.async(), redisClient, settings, address));
            } else {
                this.guardedCalls = CompletableFuture.completedFuture(calls);
            }
            // on Cluster the guard connects to a master when an acquisition first needs it
            this.guardLinks = settings.replicationGuard() != null && cluster
                    ? new ClusterGuardLinks((RedisClusterClient) redisClient, settings, core.identity().connectionName())
                    : null;
        } catch (RuntimeException e) {
            events.connectFailed();
            if (sharded != null) {
                sharded.close();
            }
            RedisConnections.closeQuietly(forGuard);
            RedisConnections.closeQuietly(wakeUps);
            RedisConnections.closeQuietly(commands);
            if (ownsRedisClient) {
                redisClient.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            }
            if (e instanceof RelockException) {
                throw e;
            }
            throw new RedisUnavailableException("cannot connect to Redis at " + address + ": " + causes(e), e);
        }
        this.connection = commands;
        this.pubSub = wakeUps;
        this.guarded = forGuard;
        events.nodeConnected(address, commands);
        EvictionPolicyCheck.warnIfLockKeysCanBeEvicted(calls, address);
        // before the keeper, whose passes write the record
        this.recordWrites = new RecordWrites(core, timer(), args -> writeRecord(LuaScript.REGISTER, args),
                args -> writeRecord(LuaScript.NAME_HOLDERS, args));
        this.leaseKeeper = LeaseKeeper.start("relock-lease-keeper", core.clientId(), holds,
                new SingleServerRenewal(this, calls), Math.max(1, settings.defaultLease().toMillis() / 3));
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

    /**
     * The messages of {@code e} and its causes, each once: Lettuce's "Unable to connect" says what failed, its cause
     * why (a refused connection, WRONGPASS, a TLS error).
     */
    private static String causes(Throwable e) {
        StringBuilder text = new StringBuilder();
        for (Throwable cause = e; cause != null && cause.getCause() != cause; cause = cause.getCause()) {
            String message = cause.getMessage();
            if (message != null && text.indexOf(message) < 0) {
                text.append(text.length() == 0 ? "" : ": ").append(message);
            }
        }
        return text.toString();
    }

    /** The newer server commands this client found at connect (for tests and diagnostics). */
    public ServerFeatures serverFeatures() {
        return features;
    }

    private static RedisCalls callsOn(StatefulConnection<String, String> connection,
            RedisClusterAsyncCommands<String, String> commands, AbstractRedisClient redisClient, RelockSettings settings,
            String address) {
        // with timeout options (set on the clients relock creates) Lettuce fails every command
        // after the connection's timeout, set to the command timeout
        return new RedisCalls(connection, commands, settings.commandTimeout(), address,
                redisClient.getResources().eventExecutorGroup(),
                redisClient.getOptions().getTimeoutOptions().isTimeoutCommands());
    }

    /** Called by {@link RelockClientBuilder#build()} with exactly one of redisUri and redisClient. */
    public static RelockClient connect(String redisUri, RedisClient redisClient, RelockSettings settings,
            ClientIdentity identity,
            List<LeaseLostListener> listeners, Instrumentation instrumentation) {
        refuseTheGuardOnALettuceThatSendsInFlightCommandsAgain(settings);
        if (redisClient != null) {
            if (settings.replicationGuard() != null && ResentCommandsNotice.sendsCommandsAgain(redisClient.getOptions())) {
                // the guard's connection is the caller's client's too; ClusterGuardLinks make their own
                throw new IllegalArgumentException("replicationGuard(...) needs a Lettuce client that does not send"
                        + " commands again after a reconnect, but the given one has autoReconnect with"
                        + " disconnectedBehavior " + redisClient.getOptions().getDisconnectedBehavior() + ": a WAIT"
                        + " sent again on a new connection counts none of the acquisition's writes and would pass it"
                        + " unreplicated. Set ClientOptions.disconnectedBehavior(REJECT_COMMANDS) (or"
                        + " autoReconnect(false)) on the RedisClient, or give relock a URI");
            }
            ResentCommandsNotice.tellIfCommandsAreSentAgain(redisClient, true);
            return offeringWhatTheGuardNeeds(new EngineClient(settings, identity, listeners, core -> new SingleServerEngine(core,
                    instrumentation, redisClient, false, "(caller's Lettuce client)")));
        }
        RedisURI uri = parse(redisUri, "redisUri");
        uri.setTimeout(settings.commandTimeout());
        RedisConnections.nameConnections(uri, identity);
        String address = uri.getSentinels().isEmpty()
                ? uri.getHost() + ":" + uri.getPort()
                : "sentinel master " + uri.getSentinelMasterId();
        RedisClient created;
        try {
            created = LazySyncRedisClient.withLazySync(uri);
        } catch (LinkageError e) {
            // a Lettuce without the protected API LazySyncRedisClient builds on
            created = RedisClient.create(uri);
        }
        created.setOptions(RedisConnections.clientOptions(settings.commandTimeout()));
        ResentCommandsNotice.tellIfCommandsAreSentAgain(created, false);
        RedisClient owned = created;
        return offeringWhatTheGuardNeeds(new EngineClient(settings, identity, listeners,
                core -> new SingleServerEngine(core, instrumentation, owned, true, address)));
    }

    /**
     * The replication guard's WAIT must never be sent again on a new connection, where it would count none of the
     * acquisition's writes and pass it unreplicated; a Lettuce older than 6.7 sends a command in flight at a dropped
     * connection again after the reconnect even under {@code REJECT_COMMANDS} (what Spring Boot 3.5 manages, 6.6.0,
     * does). Refused before anything connects.
     */
    private static void refuseTheGuardOnALettuceThatSendsInFlightCommandsAgain(RelockSettings settings) {
        if (settings.replicationGuard() != null && RedisConnections.lettuceSendsInFlightCommandsAgain()) {
            throw new IllegalStateException("replicationGuard(...) needs Lettuce 6.7 or newer, but "
                    + RedisConnections.lettuceVersion() + " is on the class path: it sends a command that was in"
                    + " flight when its connection dropped again after the reconnect, even with REJECT_COMMANDS, and"
                    + " a WAIT sent again on a new connection counts none of the acquisition's writes and would pass"
                    + " it unreplicated. Manage io.lettuce:lettuce-core at 6.7 or newer (relock is built with 6.8)");
        }
    }

    /**
     * Called by {@link RelockClientBuilder#build()} for a Redis Cluster, with exactly one of seed
     * URIs and a Lettuce cluster client.
     */
    public static RelockClient connectCluster(List<String> seedUris, RedisClusterClient clusterClient,
            RelockSettings settings, ClientIdentity identity, List<LeaseLostListener> listeners,
            Instrumentation instrumentation) {
        refuseTheGuardOnALettuceThatSendsInFlightCommandsAgain(settings);
        if (clusterClient != null) {
            ResentCommandsNotice.tellIfCommandsAreSentAgain(clusterClient, true);
            return offeringWhatTheGuardNeeds(new EngineClient(settings, identity, listeners, core -> new SingleServerEngine(core,
                    instrumentation, clusterClient, false, "(caller's Lettuce cluster client)")));
        }
        List<RedisURI> seeds = new ArrayList<>();
        for (String seedUri : seedUris) {
            RedisURI seed = parse(seedUri, "redisClusterUris");
            if (!seed.getSentinels().isEmpty()) {
                throw new IllegalArgumentException("redisClusterUris takes the URIs of cluster nodes, not of Sentinels: "
                        + RedisConnections.withoutCredentials(seedUri));
            }
            seed.setTimeout(settings.commandTimeout());
            RedisConnections.nameConnections(seed, identity);
            seeds.add(seed);
        }
        String address = "cluster " + seeds.stream().map(seed -> seed.getHost() + ":" + seed.getPort()).toList();
        RedisClusterClient created = RedisClusterClient.create(seeds);
        created.setOptions(ClusterClientOptions.builder()
                .autoReconnect(true)
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .timeoutOptions(TimeoutOptions.enabled(settings.commandTimeout()))
                .socketOptions(SocketOptions.builder().connectTimeout(settings.commandTimeout()).build())
                // learn a failover or a resharding from MOVED, ASK and failing reconnects at once,
                // and anything else within half a minute
                .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
                        .enableAllAdaptiveRefreshTriggers()
                        .adaptiveRefreshTriggersTimeout(Duration.ofSeconds(1))
                        .refreshTriggersReconnectAttempts(2)
                        .enablePeriodicRefresh(Duration.ofSeconds(30))
                        .build())
                .build());
        ResentCommandsNotice.tellIfCommandsAreSentAgain(created, false);
        return offeringWhatTheGuardNeeds(new EngineClient(settings, identity, listeners,
                core -> new SingleServerEngine(core, instrumentation, created, true, address)));
    }

    /**
     * The client, if its server offers what its replication guard needs ({@code WAITAOF} for an
     * fsynced guard); otherwise closes it and says what is missing.
     */
    private static EngineClient offeringWhatTheGuardNeeds(EngineClient client) {
        SingleServerEngine engine = (SingleServerEngine) client.engine();
        ReplicationGuard guard = client.settings().replicationGuard();
        if (guard != null && guard.fsynced() && !engine.features.waitAof()) {
            client.close();
            throw new RelockException("replicationGuard(...) is fsynced, which needs WAITAOF (Redis 7.2 or later),"
                    + " but Redis at " + engine.address + " does not offer it (COMMAND INFO WAITAOF: unknown)");
        }
        return client;
    }

    private static RedisURI parse(String uri, String setting) {
        try {
            return RedisURI.create(uri);
        } catch (RuntimeException e) {
            // Lettuce's message may repeat the URI, password included
            throw new IllegalArgumentException(setting + " is not a valid Redis URI: "
                    + RedisConnections.withoutCredentials(uri));
        }
    }

    // ---- the engine ---------------------------------------------------------------------------

    @Override
    public Acquisition acquisition(String name, LockKeys keys, LockMode mode, String owner, long leaseMillis,
            boolean renewed) {
        // an upgrade is refused before anything is sent (EngineLock), so the scripts refuse nothing here
        return new Acquisition(this, name, keys, mode, owner, leaseMillis, renewed, NO_EXTRA_ARGS,
                code -> new IllegalStateException(mode.description + " '" + name + "': unexpected reply " + code));
    }

    /**
     * Re-entries are counted in Redis as well as here (a re-entry costs one round trip and proves the lease is
     * still there). The count here is the truth: every script writes the count it is given (the owner's count
     * here, plus or less one), never increments what Redis has, so a script that ran twice or whose reply was
     * lost changes nothing a retry or the next call does not set right, and a failed {@code unlock()} may
     * simply be called again.
     */
    @Override
    public Hold reenter(Hold held, long lease, boolean renewed) {
        String name = held.lockName;
        LockKeys keys = held.keys;
        long sent = System.nanoTime();
        ModeScripts scripts = ModeScripts.of(held.mode);
        List<Long> reply = calls.await(IoThreads.offIo(timer(),
                () -> calls.<List<Long>>run(scripts.acquire, ScriptOutputType.MULTI, keys.all(),
                        scripts.acquireArgs(held.owner, leaseText(lease), held.holds(), 0, graceMillis,
                                wakeRoute(keys)))),
                "re-entry", name);
        if (reply.get(0) < 0) {
            reportLost(held, "Redis no longer had it at re-entry (key expired, deleted or forced open)");
            throw Engine.lostAtReentry(held);
        }
        if (held.state() == LeaseState.LOST) {
            // told lost while the re-entry was on its way (its deadline passed): the hold is being released by
            // owner, whatever Redis said; the re-entry's count in Redis goes with it
            throw Engine.lostAtReentry(held);
        }
        held.reenter(lease, renewed, sent);
        return held;
    }

    /**
     * One renew.lua call for the one hold, over the connection renewals take: an owner-checked extension that only
     * ever lengthens what Redis has, like a renewal, so it and the lease keeper's renewals may reach Redis in any
     * order. A release sent meanwhile (a handle closed by another thread) makes Redis answer 0, or
     * {@link SingleServerRenewal#GIVEN_UP} after a release-after, which is then no loss.
     */
    @Override
    public void extendLease(Hold hold, long leaseMillis) {
        core.ensureOpen();
        String[] keys = hold.mode == LockMode.WRITE
                ? new String[] {hold.keys.lock()} : new String[] {hold.keys.lock(), hold.keys.leases()};
        String[] args = {hold.owner, Long.toString(leaseMillis), ModeScripts.of(hold.mode).kind};
        long sent = System.nanoTime();
        // checked and sent under the dispatch lock, as a renewal is: no extension follows a release-after on this
        // connection; one that reaches Redis after a release-after on the guard's is refused there (GIVEN_UP)
        CompletableFuture<List<Long>> extension = IoThreads.offIo(timer(), () -> {
            dispatch.lock();
            try {
                return hold.releasing() ? null
                        : calls.<List<Long>>run(LuaScript.RENEW, ScriptOutputType.MULTI, keys, args);
            } finally {
                dispatch.unlock();
            }
        });
        if (extension == null) {
            throw Engine.releasedAtExtension(hold);
        }
        List<Long> reply = calls.await(extension, "lease extension", hold.lockName);
        long answer = reply.get(0);
        if (answer == SingleServerRenewal.RENEWED) {
            if (hold.leaseExtended(sent, leaseMillis)) {
                return;
            }
            if (hold.state() == LeaseState.LOST) {
                // told lost at its deadline while the extension was on its way, which Redis then granted: the lock
                // must not stay taken by nobody for the new lease
                releaseLost(hold);
                throw new LeaseLostException(hold.lockName, hold.lostReason());
            }
            throw Engine.releasedAtExtension(hold);
        }
        if (hold.releasing() || hold.state() == LeaseState.RELEASED) {
            throw Engine.releasedAtExtension(hold);
        }
        reportLost(hold, SingleServerRenewal.notRenewed(answer, "lease extension"));
        throw new LeaseLostException(hold.lockName, hold.lostReason());
    }

    @Override
    public void checkLease(String lockName, long leaseMillis, String given) {
        // one Redis keeps any positive lease
    }

    @Override
    public boolean forceUnlock(String name, LockKeys keys) {
        long deleted = calls.await(calls.<Long>run(LuaScript.FORCE_UNLOCK, ScriptOutputType.INTEGER, keys.all(),
                graceMillis, wakeRoute(keys)), "force-unlock", name);
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
        return new RedisSemaphore(this, name, LockKeys.ofSemaphore(settings.keyPrefix(), name));
    }

    @Override
    public RelockCondition condition(String lockName, LockKeys keys, String conditionName) {
        return new RedisCondition(this, lockName, keys, conditionName);
    }

    @Override
    public RelockCountDownLatch countDownLatch(String name) {
        return new RedisCountDownLatch(this, name, LockKeys.latchKey(settings.keyPrefix(), name));
    }

    @Override
    public RelockMultiLock multiLock(List<EngineLock> locks) {
        return new OrderedMultiLock(locks, events, leaseMillis -> {
            boolean renewed = leaseMillis == EngineClient.RENEWED;
            return tryWriteLockAll(locks, renewed ? core.defaultLeaseMillis() : leaseMillis, renewed);
        }, hold -> new HoldHandle(this, hold));
    }

    @Override
    public String topology() {
        return null;
    }

    @Override
    public LockInfo inspect(String name) {
        return calls.await(inspectAsync(name), "inspect", name);
    }

    @Override
    public LockInfo inspectSemaphore(String name) {
        return calls.await(inspectSemaphoreAsync(name), "inspect", name);
    }

    @Override
    public List<LockInfo> list(String nameGlob) {
        // the glob applies to names, so it is escaped like a name (its *, ? and [] stay globs);
        // the trailing * also finds the semaphores' "...}:sem" keys
        ScanArgs match = ScanArgs.Builder
                .matches(LockKeys.lockKeyPattern(settings.keyPrefix(), nameGlob) + "*")
                .limit(1000);
        List<CompletableFuture<LockInfo>> found = new ArrayList<>();
        KeyScanCursor<String> page = null;
        do {
            ScanCursor cursor = page == null ? ScanCursor.INITIAL : page;
            page = calls.await(calls.commands().scan(cursor, match), "list", null);
            for (String key : page.getKeys()) {
                String lockName = LockKeys.nameOf(settings.keyPrefix(), key);
                String semaphoreName = key.endsWith("}:sem")
                        ? LockKeys.nameOf(settings.keyPrefix(), key.substring(0, key.length() - ":sem".length()))
                        : null;
                // a key of another type that happens to match is skipped
                if (lockName != null) {
                    found.add(inspectAsync(lockName).exceptionally(error -> null));
                } else if (semaphoreName != null) {
                    found.add(inspectSemaphoreAsync(semaphoreName).exceptionally(error -> null));
                }
            }
        } while (!page.isFinished());
        List<LockInfo> locks = new ArrayList<>();
        for (CompletableFuture<LockInfo> info : found) {
            LockInfo lock = calls.await(info, "list", null);
            if (lock != null && (lock.isHeld() || lock.kind() == LockKind.SEMAPHORE)) {
                locks.add(lock);
            }
        }
        locks.sort(Comparator.comparing(LockInfo::name)
                .thenComparing(info -> info.kind() == LockKind.SEMAPHORE));
        return locks;
    }

    private CompletableFuture<LockInfo> inspectSemaphoreAsync(String name) {
        LockKeys keys = LockKeys.ofSemaphore(settings.keyPrefix(), name);
        return calls.<List<Object>>run(LuaScript.PERMITS_INSPECT, ScriptOutputType.MULTI,
                        new String[] {keys.lock(), keys.expiry(), keys.leases()})
                .thenApply(reply -> {
                    // see permits-inspect.lua for the layout
                    Map<String, Integer> holders = new LinkedHashMap<>();
                    for (int i = 3; i + 1 < reply.size(); i += 2) {
                        holders.put((String) reply.get(i), ((Long) reply.get(i + 1)).intValue());
                    }
                    return new LockInfo(name, LockKind.SEMAPHORE, holders, 0,
                            Duration.ofMillis((Long) reply.get(2)), ((Long) reply.get(1)).intValue(),
                            ((Long) reply.get(0)).intValue());
                });
    }

    private CompletableFuture<LockInfo> inspectAsync(String name) {
        LockKeys keys = LockKeys.of(settings.keyPrefix(), name);
        return calls.<List<Object>>run(LuaScript.INSPECT, ScriptOutputType.MULTI,
                        new String[] {keys.lock(), keys.expiry(), keys.leases()})
                .thenApply(reply -> {
                    // see inspect.lua for the layout
                    long pttl = (Long) reply.get(0);
                    int waiters = ((Long) reply.get(1)).intValue();
                    String writer = (String) reply.get(2);
                    Map<String, Integer> holders = new LinkedHashMap<>();
                    long token;
                    LockKind kind;
                    if (!writer.isEmpty()) {
                        holders.put(writer, ((Long) reply.get(3)).intValue());
                        token = (Long) reply.get(4);
                        kind = LockKind.EXCLUSIVE;
                    } else {
                        token = 0;
                        for (int i = 5; i + 2 < reply.size(); i += 3) {
                            holders.put((String) reply.get(i), ((Long) reply.get(i + 1)).intValue());
                            token = Math.max(token, (Long) reply.get(i + 2));
                        }
                        kind = holders.isEmpty() ? LockKind.FREE : LockKind.SHARED;
                    }
                    Duration lease = holders.isEmpty() ? Duration.ZERO
                            : pttl == -1 ? ChronoUnit.FOREVER.getDuration() : Duration.ofMillis(Math.max(0, pttl));
                    return new LockInfo(name, kind, holders, token, lease, waiters, 0);
                });
    }

    @Override
    public void register() {
        recordWrites.writeWhole();
    }

    /** Sends one write of the identity record ({@link RecordWrites}) by EVAL, in order, without waiting. */
    private void writeRecord(LuaScript script, String[] args) {
        String key = ClientRegistry.key(settings.keyPrefix(), core.clientId());
        calls.runInOrder(script, ScriptOutputType.INTEGER, new String[] {key}, args).whenComplete((written, error) -> {
            if (error != null) {
                log.debug("relock client {}: {} of its identity record failed: {}", core.clientId(), script.name(),
                        error.toString());
            }
        });
    }

    /** {@code hold}, just handed out, has its owner's thread named in the identity record soon (RecordWrites). */
    void nameHolder(Hold hold) {
        recordWrites.nameHolder(hold);
    }

    @Override
    public Map<String, String> identityRecord(String clientId) {
        return calls.await(calls.commands().hgetall(ClientRegistry.key(settings.keyPrefix(), clientId)),
                "read the identity record of client " + clientId, null);
    }

    @Override
    public Duration ping() {
        long sent = System.nanoTime();
        calls.await(calls.commands().ping(), "ping", null);
        return Duration.ofNanos(System.nanoTime() - sent);
    }

    @Override
    public void close() {
        redisClient.removeListener(reconnected);
        leaseKeeper.close();
        List<CompletableFuture<?>> releases = new ArrayList<>();
        // withdraw the queued acquisitions while the connection is still open
        IllegalStateException closedNow = core.closedException();
        waitingRoom.forEach((owner, acquisition) -> releases.add(acquisition.failAtClose(closedNow)));
        // latch and condition waiters find the client closed
        latchWaits.wakeAll();
        conditionWaits.wakeAll();
        // the identity record goes with the client (a crashed client's expires); after any write of it, on the
        // same connection, and no write follows
        // not a release: a failure here is no hold left behind (the record expires), so it is not reported
        recordWrites.delete(() -> releases.add(calls.commands().del(ClientRegistry.key(settings.keyPrefix(),
                core.clientId())).toCompletableFuture().handle((deleted, error) -> null)));
        for (Hold hold : holds.all()) {
            hold.beginRelease();
            releases.add(calls.run(ModeScripts.of(hold.mode).release, ScriptOutputType.INTEGER, hold.keys.all(),
                    releaseArgs(hold, "all")));
            hold.released();
            holds.remove(hold);
        }
        try {
            CompletableFuture.allOf(releases.toArray(CompletableFuture[]::new))
                    .get(settings.commandTimeout().toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            log.warn("relock client {}: not every held lock could be released at close; their leases run out"
                    + " by themselves: {}", core.clientId(), e.toString());
        }
        events.close();
        if (shardChannels != null) {
            shardChannels.close();
        }
        RedisConnections.closeQuietly(pubSub);
        RedisConnections.closeQuietly(guarded);
        if (guardLinks != null) {
            guardLinks.close();
        }
        RedisConnections.closeQuietly(connection);
        if (ownsRedisClient) {
            redisClient.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
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
        return redisClient.getResources().eventExecutorGroup();
    }

    /** The Lettuce client's hashed wheel timer, which its command timeouts use too: for far timers of waits. */
    Timer wheel() {
        return redisClient.getResources().timer();
    }

    /** A new id for one acquisition attempt; a grant on release names the attempt it answers. */
    long nextAttemptId() {
        return attemptIds.incrementAndGet();
    }

    /** The highest attempt id handed out so far: every attempt sent before now has an id up to it. */
    long lastAttemptId() {
        return attemptIds.get();
    }

    String graceMillis() {
        return graceMillis;
    }

    /** A lease in ms as the scripts take it, without a new string for the client's default lease. */
    String leaseText(long leaseMillis) {
        return leaseMillis == defaultLeaseMillis ? defaultLeaseText : Long.toString(leaseMillis);
    }

    /** The Cluster slot of a key; 0 for every key on a standalone or Sentinel Redis. */
    int slotOf(String key) {
        return cluster ? Utf8Codec.slotOf(key) : 0;
    }

    /**
     * Where the scripts on {@code keys} send wake-ups (see queue.lua): the lock's own shard channel
     * with sharded pub/sub, else the prefix of every client's own channel.
     */
    String wakeRoute(LockKeys keys) {
        return shardChannels != null ? keys.wakeChannel() : wakeChannelPrefix;
    }

    /**
     * {@code waiter}, whose attempt sent at {@code attemptSentNanos} found its lock taken, waits
     * from now on: with sharded pub/sub, listen to its lock's channel until
     * {@link #stopListeningForWakeUps}. Called under the acquisition's lock.
     *
     * @return whether it should try again at once (see {@link ShardWakeChannels#join})
     */
    boolean listenForWakeUps(Acquisition waiter, long attemptSentNanos) {
        return shardChannels != null && shardChannels.join(waiter.keys().wakeChannel(), waiter, attemptSentNanos);
    }

    /** Where latch.lua sends the wake-ups of the latch at {@code latchKey}, as {@link #wakeRoute(LockKeys)}. */
    String wakeRoute(String latchKey) {
        return shardChannels != null ? latchKey + ":wake" : wakeChannelPrefix;
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

    LatchWaits latchWaits() {
        return latchWaits;
    }

    ConditionWaits conditionWaits() {
        return conditionWaits;
    }

    /** {@code waiter} no longer waits. Called under the acquisition's lock. */
    void stopListeningForWakeUps(Acquisition waiter) {
        if (shardChannels != null) {
            shardChannels.leave(waiter.keys().wakeChannel(), waiter);
        }
    }

    RedisCalls calls() {
        return calls;
    }

    /**
     * Where fresh acquisitions of keys in {@code slot}, their withdrawals and their replication
     * guard's {@code WAIT} go: one connection, so they reach Redis in order and the {@code WAIT}
     * counts the acquisition. Completed at once, except on Cluster with a guard while the
     * connection to the slot's master is being opened (see {@link ClusterGuardLinks}); such a
     * connection does not follow redirections, see {@link #redirected}.
     */
    CompletableFuture<RedisCalls> acquisitionCalls(int slot) {
        return guardLinks != null ? guardLinks.toMasterOf(slot) : guardedCalls;
    }

    /**
     * If {@code error} is a Cluster redirection ({@code MOVED}) that a guard's node connection met,
     * so the script was not run: asks for a fresh topology and returns when that is done, for a
     * retry on the slot's new master. Otherwise null. Only a guard's node connection sees MOVED;
     * the routed one follows it itself.
     */
    CompletableFuture<Void> refreshIfMoved(Throwable error) {
        return guardLinks != null && RedisCalls.isMoved(error) ? guardLinks.refreshTopology() : null;
    }

    /**
     * On a Cluster, asks Lettuce for a fresh topology when {@code error} says a node could not be
     * reached, at most once a second; any thread, never blocks. Lettuce's adaptive refresh does not
     * count a connection that could not be opened, and a client that read the topology from a node
     * that had not yet seen a failover would otherwise keep routing to the dead master until its
     * periodic refresh (30 s).
     */
    void refreshIfUnreachable(Throwable error) {
        if (!cluster || !RedisCalls.isConnectionFailure(error)) {
            return;
        }
        long now = System.nanoTime();
        long last = lastUnreachableRefresh.get();
        if (now - last < UNREACHABLE_REFRESH_NANOS || !lastUnreachableRefresh.compareAndSet(last, now)) {
            return;
        }
        ((RedisClusterClient) redisClient).refreshPartitionsAsync().whenComplete((done, failure) -> {
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
        return sent.exceptionallyCompose(error -> RedisCalls.connectionGone(error)
                ? calls.runInOrder(script, ScriptOutputType.INTEGER, keys, args)
                : CompletableFuture.failedFuture(error));
    }

    /** How long one command may take before it fails with a timeout. */
    Duration commandTimeout() {
        return settings.commandTimeout();
    }

    /** The replication guard of every fresh acquisition, or null. */
    ReplicationGuard replicationGuard() {
        return settings.replicationGuard();
    }

    WaitingRoom waitingRoom() {
        return waitingRoom;
    }

    LocalLines localLines() {
        return localLines;
    }

    @Override
    public LockEvents events() {
        return events;
    }

    /**
     * Gives up one hold, from whatever thread; when it is the owner's last and {@code delayMillis}
     * is positive, the hold stays taken in Redis until that long from now, no longer renewed.
     *
     * @param byHandle given up by a handle, which cannot be closed twice: when Redis cannot be reached the hold
     *     is given up here all the same (Redis keeps a count one too high until the owner's next release or
     *     re-entry writes its own; the owner's last release deletes every hold whatever the count)
     */
    @Override
    public void release(Hold hold, long delayMillis, boolean byHandle) {
        core.ensureOpen();
        if (delayMillis > 0 && hold.mode == LockMode.WRITE && hold.holds() <= 1
                && holds.get(hold.keys, LockMode.READ, hold.owner) != null) {
            // the read hold lives in the same hash: its renewals would keep the write hold past the delay, and
            // cutting the hash to the delay would end the read hold with it
            throw new IllegalStateException("releaseAfter of the write lock of '" + hold.lockName
                    + "' while its owner also holds the read lock (a downgrade): release the read lock first,"
                    + " or close() the write lock");
        }
        if (hold.state() == LeaseState.LOST) {
            throw lostAtRelease(hold);
        }
        boolean last = hold.holds() <= 1;
        ReleaseInFlight sent;
        try {
            sent = sendOwnersRelease(hold, last, delayMillis);
        } catch (RelockException e) {
            releaseFailed(hold, last, false, byHandle);
            throw e;
        }
        Object reply;
        try {
            reply = calls.await(sent.reply, sent.handedOver, "release", hold.lockName);
        } catch (RelockException e) {
            releaseFailed(hold, last, sent.named, byHandle);
            throw e;
        }
        releaseAnswered(sent, reply);
    }

    /**
     * Gives up the last hold of {@code hold}'s owner (every hold it has of the lock in Redis) as {@link #release} does,
     * without waiting for the reply in the calling thread: for a caller that is no thread (a condition's await for a
     * handle). Any thread but an I/O thread.
     *
     * @return a stage that completes once released, exceptionally with what {@link #release} would throw; on an event
     *     executor (a loss found here is told to the client's listeners there), or the calling thread when it fails
     *     before anything was sent
     */
    CompletableFuture<Void> releaseLastAsync(Hold hold) {
        CompletableFuture<Void> released = new CompletableFuture<>();
        ReleaseInFlight sent;
        try {
            core.ensureOpen();
            if (hold.state() == LeaseState.LOST) {
                throw lostAtRelease(hold);
            }
            sent = sendOwnersRelease(hold, true, 0);
        } catch (RelockException e) {
            releaseFailed(hold, true, false, true);
            return CompletableFuture.failedFuture(e);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        calls.within(sent.reply, sent.handedOver, "release", hold.lockName).whenComplete((reply, error) ->
                handOff(() -> {
                    try {
                        if (error != null) {
                            releaseFailed(hold, true, sent.named, true);
                            released.completeExceptionally(error);
                        } else {
                            releaseAnswered(sent, reply);
                            released.complete(null);
                        }
                    } catch (RuntimeException e) {
                        released.completeExceptionally(e);
                    }
                }));
        return released;
    }

    /** Runs {@code task} on an event executor; on the calling thread once they are shut down (the client closed). */
    void handOff(Runnable task) {
        try {
            timer().execute(task);
        } catch (RejectedExecutionException e) {
            task.run();
        }
    }

    /** A hold found lost before its release was sent: given up here, cleaned up in Redis by owner; what to throw. */
    private LeaseLostException lostAtRelease(Hold hold) {
        if (hold.drop() == 0) {
            holds.remove(hold);
            // clean up in case the key outlived the local view of the lease
            releaseLost(hold);
            wakeLineOf(hold);
        }
        return new LeaseLostException(hold.lockName, hold.lostReason());
    }

    /**
     * A release sent: its reply, and the stage that completes after what runs on the reply (the hand-over to the
     * lock's next holder in this client), whatever its outcome.
     *
     * @param named whether the release named a successor from the lock's line, whose hand-over then speaks for the line
     */
    private record ReleaseInFlight(Hold hold, boolean last, CompletableFuture<Object> reply,
            CompletableFuture<Object> handedOver, boolean named) {
    }

    /**
     * Sends the release of one hold ({@code last}: of every hold of the owner in Redis), with the hand-over of a
     * write lock's last release.
     */
    private ReleaseInFlight sendOwnersRelease(Hold hold, boolean last, long delayMillis) {
        // the write lock's last release hands over: it may name a successor from the lock's line (LocalLines), and a
        // grant to a waiter of this client comes back in its reply. Only while one waits here (in the line or in
        // Redis): without, a grant to a waiter that joined meanwhile is published, as every other grant is, and the
        // release keeps its plain integer reply. Never with a delay, nor with a replication guard, whose waiters take
        // no grants (and whose releases go over the guard's connection). Marks the hold releasing: from here on no
        // thread of this client joins the line behind it
        LocalLines.Line handOver = last && hold.mode == LockMode.WRITE
                ? localLines.beginHandOver(hold, delayMillis == 0 && replicationGuard() == null,
                        () -> waitingRoom.waitsFor(hold.keys.lock()))
                : null;
        boolean grantsInReply = handOver != null;
        LocalLines.Succession[] named = {null};
        // the last local hold drops every hold in Redis, so a re-entry whose reply was lost
        // cannot keep the lock alive
        String[] args = last && delayMillis > 0
                ? new String[] {hold.owner, ModeScripts.of(hold.mode).kind, Long.toString(delayMillis),
                        wakeRoute(hold.keys), Long.toString(hold.fencingToken)}
                : grantsInReply
                        ? withSuccessor(releaseArgs(hold, "all"), GRANT_IN_REPLY)
                        : releaseArgs(hold, last ? "all" : Integer.toString(hold.holds() - 1));
        LuaScript script = last && delayMillis > 0 ? LuaScript.RELEASE_AFTER : ModeScripts.of(hold.mode).release;
        ScriptOutputType type = grantsInReply ? ScriptOutputType.VALUE : ScriptOutputType.INTEGER;
        // a renewal either went out before this release or sees the hold releasing and is not sent. One that went
        // out before may still reach Redis after a release-after sent over the guard's connection: renew.lua
        // leaves the lease it cut to the delay (the hold's mark). Taken in the thread that sends (never while
        // offIo waits for an executor, whose task might wait for it)
        CompletableFuture<Object> sent;
        try {
            sent = IoThreads.offIo(timer(), () -> {
                if (handOver != null) {
                    named[0] = localLines.nameSuccessor(handOver,
                            successor -> dispatchRelease(hold, last, script, type, withSuccessor(args, successor)));
                    if (named[0] != null) {
                        return named[0].sent();
                    }
                }
                return dispatchRelease(hold, last, script, type, args);
            });
        } catch (RuntimeException e) {
            if (handOver != null && named[0] == null) {
                // nothing was sent: the hand-over ends here
                localLines.handedOver(hold.keys, handOver, false);
            }
            throw e;
        }
        LocalLines.Succession succession = named[0];
        // on the I/O thread that reads the reply, whether or not this thread still waits for it; this thread
        // goes on once it ran, so the next holder is woken first
        CompletableFuture<Object> handedOver = sent;
        if (succession != null) {
            handedOver = sent.whenComplete(
                    (reply, error) -> handOver(hold.keys, handOver, succession, reply, error));
        } else if (handOver != null) {
            handedOver = sent.whenComplete((reply, error) -> deliverGrant(hold.keys, handOver, reply, error));
        }
        return new ReleaseInFlight(hold, last, sent, handedOver, succession != null);
    }

    /** A release whose outcome is unknown (no reply in time, or refused): given up here as far as it goes. */
    private void releaseFailed(Hold hold, boolean last, boolean named, boolean byHandle) {
        if (last) {
            // stop renewing: the lease runs out in Redis by itself
            holds.remove(hold);
            hold.released();
            if (!named) {
                wakeLineOf(hold);
            }
        } else if (byHandle) {
            hold.drop();
        }
    }

    /**
     * Redis answered a release: the holds it left, or -1 when it no longer had the lock.
     *
     * @throws LeaseLostException if it no longer had the lock: the hold is reported lost
     */
    private void releaseAnswered(ReleaseInFlight sent, Object reply) {
        Hold hold = sent.hold;
        long left = reply instanceof String text ? ReleaseReply.holdsLeft(text) : (Long) reply;
        if (left < 0) {
            reportLost(hold, "Redis no longer had it at release (lease ran out, key deleted or forced open)");
            if (hold.drop() == 0) {
                holds.remove(hold);
                if (!sent.named) {
                    wakeLineOf(hold);
                }
            }
            throw new LeaseLostException(hold.lockName, hold.lostReason());
        }
        if (sent.last) {
            holds.remove(hold);
            if (!sent.named) {
                wakeLineOf(hold);
            }
            hold.drop();
            hold.released();
            if (log.isDebugEnabled()) { // spares the varargs array and the boxing when off
                log.debug("{} '{}' released by {} (fencing token {}, held {} ms)",
                        hold.mode.description, hold.lockName, hold.owner, hold.fencingToken, hold.heldMillis());
            }
        } else {
            hold.drop();
        }
    }

    /**
     * Undoes the grant with fencing token {@code token} that a release made to {@code owner}, a successor whose
     * acquisition ended before the release's reply came, if nobody took it since (withdraw.lua's ARGV[7]). The
     * successor's own withdraw follows the release's first send, but not a second send after NOSCRIPT or TRYAGAIN,
     * which may run after it and still grant. Without waiting.
     */
    void undoGrant(LockKeys keys, String owner, long token) {
        cleanUpOn(calls, ModeScripts.WRITE.withdraw, keys.all(), owner, ModeScripts.WRITE.kind, "0", graceMillis,
                wakeRoute(keys), Long.toString(lastAttemptId()), Long.toString(token)).whenComplete((undone, error) -> {
                    if (error != null) {
                        log.debug("undoing the grant of '{}' to {}, which gave up, failed; it runs out with its lease: {}",
                                keys.lock(), owner, error.toString());
                    }
                });
    }

    /** Sends a release of {@code hold} under the dispatch lock, which orders it after the hold's renewals. */
    private CompletableFuture<Object> dispatchRelease(Hold hold, boolean last, LuaScript script, ScriptOutputType type,
            String[] args) {
        dispatch.lock();
        try {
            if (last) {
                hold.beginRelease();
            }
            return sendRelease(hold, script, type, args);
        } finally {
            dispatch.unlock();
        }
    }

    /** release.lua's arguments with a successor's (its ARGV[7..9]) after them. */
    /** release.lua's optional argument, after a write release's own, that asks for a grant to this client's waiter in the reply. */
    private static final String[] GRANT_IN_REPLY = {"1"};

    private static String[] withSuccessor(String[] args, String[] successor) {
        String[] all = Arrays.copyOf(args, args.length + successor.length);
        System.arraycopy(successor, 0, all, args.length, successor.length);
        return all;
    }


    /**
     * The reply of a release that named a successor from the lock's line ({@link LocalLines}). The successor takes
     * the grant the reply carries for it; any other grant to a waiter here goes to that waiter, as in
     * {@link #deliverGrant}. Without a grant for it, the successor tries in Redis, and the line does too once nobody here
     * leads it. Without a reply (or -1 from a second run of a release sent again after a reconnect), Redis may have
     * made the successor the holder: the successor and the line then try once Redis answers again
     * ({@link #wakeWaitersOnceReachable}), and the successor's attempt takes the grant it crosses. On the I/O thread
     * that reads the reply, or the caller's.
     */
    private void handOver(LockKeys keys, LocalLines.Line line, LocalLines.Succession succession, Object reply,
            Throwable error) {
        ReleaseReply.Grant grant = error == null ? ReleaseReply.grant((String) reply) : null;
        if (grant != null && grant.attempt() == succession.attempt()) {
            succession.successor().succession(grant.attempt(), grant.token(), false,
                    () -> localLines.handedOver(keys, line, false));
            return;
        }
        if (grant != null) {
            // a thread of this client that waited in Redis went first: the successor waits behind it, in the line
            succession.successor().passedOver(succession.attempt());
            waitingRoom.granted(keys.lock(), grant.owner(), grant.attempt(), grant.token(),
                    () -> localLines.handedOver(keys, line, false));
            return;
        }
        boolean unknown = error != null || ReleaseReply.holdsLeft((String) reply) < 0;
        succession.successor().succession(succession.attempt(), -1, unknown, () -> {
            localLines.handedOver(keys, line, unknown);
            if (unknown) {
                // once the hand-over is off the line, so a thread that joined it meanwhile is woken too
                wakeWaitersOnceReachable(keys, 0);
            }
        });
    }

    /**
     * Hands a grant on release that came back in the reply of this client's release (release.lua) to the owner's
     * acquisition here. A release with no reply (lost with its connection, timed out, given up) may have granted the
     * lock to a waiter here all the same, and so may the first run of a release that Redis ran twice (a Lettuce
     * client that sends again what was in flight at a reconnect; the second run answers -1): then this client's
     * waiters for the lock try again ({@link #wakeWaitersOnceReachable}), and the one granted takes its grant so.
     * Ends the hand-over counted in for the release ({@link LocalLines#beginHandOver}) once the grant was handled. On
     * the I/O thread that reads the reply, or the caller's.
     */
    private void deliverGrant(LockKeys keys, LocalLines.Line line, Object reply, Throwable error) {
        ReleaseReply.Grant grant = error == null ? ReleaseReply.grant((String) reply) : null;
        if (grant != null) {
            waitingRoom.granted(keys.lock(), grant.owner(), grant.attempt(), grant.token(),
                    () -> localLines.handedOver(keys, line, false));
        } else if (error != null || ReleaseReply.holdsLeft((String) reply) < 0) {
            // the hand-over off the line first, so a thread that joined it meanwhile is woken too
            localLines.handedOver(keys, line, true);
            wakeWaitersOnceReachable(keys, 0);
        } else {
            localLines.handedOver(keys, line, false);
        }
    }

    /**
     * After {@code waitedNanos}, reads the lock's key over the connection this client's attempts on it take, again
     * with {@link RetryBackoff} until Redis answers; then this client's waiters for the lock try again. Not at once:
     * while the connection is down an attempt would be refused, and a waiter with a deadline would fail on it. A read,
     * not a wait for a reconnect event: those come for every connection of the Lettuce client, this one or not.
     */
    private void wakeWaitersOnceReachable(LockKeys keys, long waitedNanos) {
        // only a waiter here when the release ran can have been granted; one that left since withdrew, undoing it
        if (core.isClosed() || !waitingRoom.waitsFor(keys.lock())) {
            return;
        }
        try {
            timer().schedule(() -> {
                if (core.isClosed() || !waitingRoom.waitsFor(keys.lock())) {
                    return;
                }
                // bounded even where the Lettuce client has no timeout of its own (a black-holed connection)
                calls.commands().exists(keys.lock()).toCompletableFuture()
                        .orTimeout(calls.timeoutNanos(), TimeUnit.NANOSECONDS).whenComplete((found, error) -> {
                    if (error == null) {
                        waitingRoom.wakeWaitersOf(keys.lock());
                    } else {
                        wakeWaitersOnceReachable(keys, RetryBackoff.after(waitedNanos));
                    }
                });
            }, waitedNanos, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            // the executor shuts down only with the client, which ends every waiter
        }
    }

    /**
     * Sends the owner's release of every hold of {@code hold}'s lock again, after a release of its last hold whose
     * outcome is unknown (it threw {@link RedisUnavailableException}: it may have run), and waits for the reply: the
     * holds it left, or -1 when Redis no longer had the lock (the first ran, or the lease had run out). Over the
     * connection the first took, after it; from the owner's thread, never an I/O thread.
     *
     * @throws RedisUnavailableException if this one gets no reply either
     */
    Long releaseAgain(Hold hold) {
        core.ensureOpen();
        Object reply = calls.await(sendRelease(hold, ModeScripts.of(hold.mode).release, ScriptOutputType.INTEGER,
                releaseArgs(hold, "all")), "release", hold.lockName);
        return (Long) reply;
    }

    /** As {@link #releaseAgain}, without waiting: fails as it would throw. Any thread but an I/O thread. */
    CompletableFuture<Object> releaseAgainAsync(Hold hold) {
        if (core.isClosed()) {
            return CompletableFuture.failedFuture(core.closedException());
        }
        return calls.within(sendRelease(hold, ModeScripts.of(hold.mode).release, ScriptOutputType.INTEGER,
                releaseArgs(hold, "all")), "release", hold.lockName);
    }

    /** Gives up a hold nobody will see, without waiting: from any thread, I/O threads included. */
    void releaseUnseen(Hold hold) {
        hold.beginRelease();
        holds.remove(hold);
        hold.released();
        releaseInOrder(hold);
        wakeLineOf(hold);
    }

    /**
     * Releases, by owner and in order, the key of a hold reported lost that Redis may still keep (its
     * lease outlived the local deadline, or a renewal got through after it); once per hold, from the
     * owner's unlock or the lease keeper, whichever comes first. The monitor makes the other wait until
     * the release is sent, so an owner's next acquisition of the lock always goes after it and is
     * never the one released.
     */
    void releaseLost(Hold hold) {
        synchronized (hold) {
            if (hold.firstLostRelease()) {
                releaseInOrder(hold);
            }
        }
    }

    /** A new hold joins the table, and the lease keeper watches its deadline. */
    void track(Hold hold) {
        holds.add(hold);
        leaseKeeper.watch(hold);
    }

    /** Sends the owner's release of every hold of {@code hold}'s lock, from any thread (see {@link IoThreads}). */
    private void releaseInOrder(Hold hold) {
        IoThreads.offIo(timer(), () -> cleanUpOn(releaseCalls(hold), ModeScripts.of(hold.mode).release,
                hold.keys.all(), releaseArgs(hold, "all")));
    }

    /** The arguments of {@code hold}'s release script; {@code keeps}: the holds the owner keeps, or "all". */
    private String[] releaseArgs(Hold hold, String keeps) {
        return ModeScripts.of(hold.mode).releaseArgs(hold.owner, keeps, graceMillis, wakeRoute(hold.keys),
                hold.fencingToken);
    }

    /**
     * Where releases of {@code hold} go: over the connection this client acquires on (a replication guard's own, or
     * the shared one), so that the owner's next acquisition of the lock reaches Redis after the release. On another
     * connection a release stalled past the command timeout (its hold already dropped here) could be overtaken by
     * that acquisition, which takes the stale hold over, and then free the lock under it. A guard's connection still
     * being opened (Cluster) leaves the shared one.
     */
    private RedisCalls releaseCalls(Hold hold) {
        CompletableFuture<RedisCalls> route = acquisitionCalls(slotOf(hold.keys.lock()));
        return route.isDone() && !route.isCompletedExceptionally() ? route.join() : calls;
    }

    /**
     * Sends a release script of {@code hold} over {@link #releaseCalls}. A guard's Cluster connection does not follow
     * redirections, so a release refused there with {@code MOVED} (not run) is sent again, once, over the connection
     * to the slot's new master. A caller that gives up on the reply ({@link RedisCalls#await} cancels it) stops both
     * the NOSCRIPT fallback and that second send: nothing of this release may follow what the caller sends next.
     */
    private CompletableFuture<Object> sendRelease(Hold hold, LuaScript script, ScriptOutputType type, String[] args) {
        RedisCalls on = releaseCalls(hold);
        CompletableFuture<Object> sent = on.run(script, type, hold.keys.all(), args);
        if (on == calls) {
            return sent;
        }
        CompletableFuture<Object> reply = new CompletableFuture<>();
        reply.whenComplete((value, error) -> {
            if (reply.isCancelled()) {
                on.abandon(sent);
            }
        });
        sent.whenComplete((value, error) -> {
            CompletableFuture<Void> refreshed = error == null ? null : refreshIfMoved(error);
            if (refreshed == null) {
                complete(reply, value, error);
                return;
            }
            refreshed.whenComplete((fresh, failure) -> {
                // reply's monitor orders this against the caller's giving up
                synchronized (reply) {
                    if (reply.isDone()) {
                        return;
                    }
                    RedisCalls next = releaseCalls(hold);
                    CompletableFuture<Object> again = next.run(script, type, hold.keys.all(), args);
                    reply.whenComplete((ignored, cancelled) -> {
                        if (reply.isCancelled()) {
                            next.abandon(again);
                        }
                    });
                    again.whenComplete((answer, failed) -> complete(reply, answer, failed));
                }
            });
        });
        return reply;
    }

    private static <T> void complete(CompletableFuture<T> future, T value, Throwable error) {
        if (error == null) {
            future.complete(value);
        } else {
            future.completeExceptionally(error);
        }
    }

    /**
     * Takes the write locks of {@code locks} for the current thread in one script, all or none,
     * without queueing; null when one was not free or the thread holds one of them already, and
     * on Cluster when the names are in more than one slot (a script may touch one slot only): the
     * caller then takes them one by one.
     */
    List<Hold> tryWriteLockAll(List<EngineLock> locks, long leaseMillis, boolean renewed) {
        core.ensureOpen();
        if (cluster && locks.stream().map(lock -> slotOf(lock.keys().lock())).distinct().count() > 1) {
            return null;
        }
        String owner = core.ownerOfCurrentThread();
        List<String> keys = new ArrayList<>();
        for (EngineLock lock : locks) {
            if (holds.get(lock.keys(), LockMode.WRITE, owner) != null
                    || holds.get(lock.keys(), LockMode.READ, owner) != null) {
                return null;
            }
            keys.addAll(List.of(lock.keys().all()));
        }
        long sent = System.nanoTime();
        // on the acquisitions' connection, so a guard's WAIT counts it and the undo follows in order
        RedisCalls acquiring = calls.await(acquisitionCalls(slotOf(locks.get(0).keys().lock())), "multi-lock", null);
        List<Long> reply;
        try {
            reply = acquiring.await(IoThreads.offIo(timer(), () -> acquiring.<List<Long>>run(LuaScript.MULTI_ACQUIRE,
                    ScriptOutputType.MULTI, keys.toArray(String[]::new), owner, Long.toString(leaseMillis))),
                    "multi-lock", null);
        } catch (RedisUnavailableException e) {
            // it may still be applied
            undoAll(acquiring, locks, owner);
            throw e;
        } catch (RelockException e) {
            if (refreshIfMoved(e) != null) {
                // not run: the caller goes on lock by lock, and each acquisition follows the slot
                return null;
            }
            throw e;
        }
        if (reply.get(0) != 1) {
            return null;
        }
        ReplicationGuard guard = replicationGuard();
        if (guard != null) {
            long acknowledged;
            try {
                acknowledged = acquiring.await(IoThreads.offIo(timer(), () -> acquiring.awaitReplicas(guard)),
                        "multi-lock", null);
            } catch (RelockException e) {
                undoAll(acquiring, locks, owner);
                throw e;
            }
            if (acknowledged < guard.replicas()) {
                undoAll(acquiring, locks, owner);
                if (guard.onShortfall() == ReplicationGuard.OnShortfall.FAIL) {
                    throw new ReplicationShortfallException(locks.get(0).name(), acknowledged, guard.replicas(),
                            acquiring.address());
                }
                // the caller goes on lock by lock, each acquisition guarded by itself
                return null;
            }
        }
        List<Hold> taken = new ArrayList<>();
        for (int i = 0; i < locks.size(); i++) {
            EngineLock lock = locks.get(i);
            Hold hold = new Hold(lock.name(), lock.keys(), LockMode.WRITE, owner, reply.get(i + 1),
                    leaseMillis, renewed, sent);
            // the multi-lock takes them for the calling thread
            hold.acquiredOn(Thread.currentThread().getName());
            track(hold);
            recordWrites.nameHolder(hold);
            events.held(hold);
            taken.add(hold);
            log.debug("lock '{}' acquired by {} with fencing token {} (multi-lock, one script)",
                    hold.lockName, owner, hold.fencingToken);
        }
        return taken;
    }

    /** Undoes every fresh hold of {@code owner} on {@code locks}, in order on {@code on}, without waiting. */
    private void undoAll(RedisCalls on, List<EngineLock> locks, String owner) {
        IoThreads.offIo(timer(), () -> {
            for (EngineLock lock : locks) {
                cleanUpOn(on, ModeScripts.WRITE.withdraw, lock.keys().all(),
                        ModeScripts.WRITE.withdrawArgs(owner, true, graceMillis, wakeRoute(lock.keys()),
                                lastAttemptId()));
            }
        });
    }

    /** Marks a hold lost and tells the listeners, once. */
    void reportLost(Hold hold, String reason) {
        if (hold.lose(reason)) {
            core.tellLost(hold, reason);
            wakeLineOf(hold);
        }
    }

    /**
     * force-unlock.lua deleted the lock that {@code owner}, of this client, held for writing with fencing token
     * {@code token}: the hold is reported lost now rather than at its next renewal, and the threads of its line try in
     * Redis. On the pub/sub thread, so the report, which runs the user's listeners, goes to the executor.
     */
    private void forcedOpen(String lockKey, String owner, long token) {
        for (Hold hold : holds.all()) {
            if (hold.mode == LockMode.WRITE && hold.fencingToken == token && hold.owner.equals(owner)
                    && hold.keys.lock().equals(lockKey)) {
                try {
                    timer().execute(() -> reportLost(hold, "an operator forced it open (force-unlock)"));
                } catch (RejectedExecutionException e) {
                    // the executor shuts down only with the client, whose holds are given up then
                }
            }
        }
    }

    /**
     * A hold of this client is gone or lost, and no release of it named a successor (whose reply then speaks for the
     * line, see {@link #handOver}): if it was a write hold, the threads of the lock's line try in Redis (the lock may be
     * free there), unless another owner here leads it.
     */
    private void wakeLineOf(Hold hold) {
        if (hold.mode == LockMode.WRITE) {
            localLines.wakeIfUnled(hold.keys);
        }
    }

    /**
     * As {@link #reportLost}, for the lease keeper at a hold's deadline, unless a lease extension confirmed since the
     * keeper looked has moved the deadline ({@link Hold#loseAtDeadline}).
     *
     * @return whether the hold is lost now (by this call or an earlier one)
     */
    boolean reportLostAtDeadline(Hold hold, String reason, ToLongFunction<Hold> deadlineOf) {
        if (hold.loseAtDeadline(System.nanoTime(), deadlineOf, reason)) {
            core.tellLost(hold, reason);
            wakeLineOf(hold);
        }
        return hold.state() == LeaseState.LOST;
    }
}
