package dev.relock.internal.redlock;

import dev.relock.ClientIdentity;
import dev.relock.LeaseLostListener;
import dev.relock.LockInfo;
import dev.relock.RedisUnavailableException;
import dev.relock.RelockClient;
import dev.relock.RelockException;
import dev.relock.RelockCondition;
import dev.relock.RelockCountDownLatch;
import dev.relock.RelockMultiLock;
import dev.relock.RelockSemaphore;
import dev.relock.RelockSettings;
import dev.relock.internal.engine.Engine;
import dev.relock.internal.engine.EngineClient;
import dev.relock.internal.engine.EngineLock;
import dev.relock.internal.engine.Hold;
import dev.relock.internal.engine.HoldTable;
import dev.relock.internal.engine.LockKeys;
import dev.relock.internal.engine.LockMode;
import dev.relock.internal.engine.OrderedMultiLock;
import dev.relock.internal.engine.RedisConnections;
import dev.relock.internal.lease.LeaseKeeper;
import dev.relock.internal.metrics.Instrumentation;
import dev.relock.internal.engine.LockEvents;
import io.lettuce.core.RedisURI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link Engine} for Redlock: N (3, 5 or 7) independent Redis masters, one command and one
 * pub/sub connection each, every command sent to all of them at once (never one after another)
 * and its replies counted as they come ({@link Poll}).
 *
 * <p>Design notes.
 * <ul>
 *   <li>A lock is held when a majority ({@code N/2 + 1}) of nodes granted it (acquire.lua), and
 *       only until {@code sent + lease - drift}, where {@code sent} is when the requests went out
 *       (not when the replies came) and drift is the {@link ClockDrift}. The {@link Hold} keeps
 *       that bound as its lease end: its lease start is recorded as {@code sent - drift}.</li>
 *   <li>Fencing tokens: each node hands out its own (acquire.lua); the acquirer takes the
 *       maximum of its majority's and writes it back to a majority (fence.lua) before it uses it,
 *       so every later majority contains a node that hands out a larger one. This assumes a node
 *       does not forget its fence: persistence, or a node that restarts empty stays down for the
 *       longest lease (its TIME-based floor then still keeps tokens rising).</li>
 *   <li>Read-write locks. Invariant: a writer and a reader of one name never hold at once, nor
 *       two writers. A node grants the write side only when it has no live reader and no writer
 *       (acquire.lua), the read side only when it has no writer but the reader itself
 *       (acquire-read.lua: a writer may take the read side, a downgrade); a node keeps a grant
 *       until that holder's lease ends by the node's clock. A hold needs a majority of grants;
 *       any two majorities share a node, and that node cannot have granted both while both
 *       leases run. Readers are renewed, restored and reported lost by majority exactly like
 *       writers. Writer preference without a queue: a refused writer that goes on waiting marks
 *       the nodes (acquire.lua, until its next attempt is due), and a node with a mark refuses new
 *       readers, but never a reader it already has nor the owner of the write lock (downgrade);
 *       the mark goes when the writer gets the lock or stops waiting. Marks only refuse, so they
 *       bear on waiting, never on the invariant.</li>
 *   <li>Re-entries are counted in the JVM only; the nodes hold a lock once per owner and mode.</li>
 *   <li>Whatever did not end in a held lock is cleaned up on every node by owner, by EVAL in
 *       order on each connection, so it reaches a node after the attempt it undoes, even one that
 *       timed out and is applied later. A lost hold is cleaned up only after its owner and the
 *       listeners were told (until then the nodes keep it until its lease ends there, which is
 *       after the hold's deadline here), naming the attempt that took it, so a clean-up that
 *       reaches a node after the owner's next attempt leaves that attempt's hold alone.</li>
 *   <li>{@link #dispatch} orders renewals against releases: the lease keeper sends a batch, and an
 *       owner marks a hold releasing and sends its release, each under the lock; a restore (a node
 *       that lost the key takes it back) and a lease extension ({@link #extendLease}) are sent under
 *       it only for a hold still held, so none reaches a node after the release or the clean-up of a
 *       lost hold.</li>
 * </ul>
 *
 * <p>A facade: each job is a collaborator's, made and wired here, and closed here in order.
 * <ul>
 *   <li>{@link NodeSet}: the nodes, their connections, sends to all at once and their {@link Poll}s.</li>
 *   <li>{@link Acquisitions} and {@link RedlockAcquisition}: fresh acquisitions by majority, waiting on
 *       {@link ReleaseSignals}; {@link CleanUps} undoes what did not end in a held lock.</li>
 *   <li>{@link LeaseExtensions} (re-entry, extension, restore) and {@link RedlockRenewal} (the lease keeper's
 *       batches); {@link MajorityRelease} and {@link LossReports} end a hold.</li>
 *   <li>{@link OperatorViews} (inspect, list) and {@link IdentityRecords} (the client's record).</li>
 * </ul>
 *
 * <p>Public because the builder, in the API package, connects through it.
 */
public final class RedlockEngine implements Engine {

    private static final Logger log = LoggerFactory.getLogger(RedlockEngine.class);

    // the client this engine serves: ids, the hold table, loss reporting
    private final EngineClient core;
    private final RelockSettings settings;
    // the client's table
    private final HoldTable holds;
    private final ClockDrift drift;
    private final LockEvents events;
    private final ReleaseSignals signals;
    // orders renewals, extensions and restores against releases and loss reports: see the design notes
    private final ReentrantLock dispatch = new ReentrantLock();
    private final NodeSet nodes;
    private final CleanUps cleanUps;
    private final MajorityRelease releases;
    private final LeaseExtensions extensions;
    private final OperatorViews views;
    private final IdentityRecords records;
    private final LeaseKeeper leaseKeeper;
    private final Acquisitions acquisitions;

    private RedlockEngine(EngineClient core, List<RedisURI> uris, ClockDrift drift, Instrumentation instrumentation) {
        this.core = core;
        this.settings = core.settings();
        this.holds = core.holds();
        // before connecting: each node reads as down until it tells of its command connection
        this.events = instrumentation.events(uris.stream().map(RedlockNode::addressOf).toList());
        this.drift = drift;
        this.signals = new ReleaseSignals(core.ticker());
        String channel = settings.keyPrefix() + ":redlock:released";
        ReleaseCalls releaseCalls = new ReleaseCalls(channel, settings.handoffGrace());
        this.nodes = new NodeSet(uris, settings, channel, signals, events, core.ticker());
        this.cleanUps = new CleanUps(nodes, releaseCalls);
        LossReports losses = new LossReports(core, nodes, dispatch, cleanUps);
        this.releases = new MajorityRelease(nodes, releaseCalls, dispatch, holds, losses, cleanUps, core.clientId());
        Poll<Void> connected = nodes.connect();
        if (!connected.won()) {
            RelockException failure = nodes.unavailable("connecting", null, connected);
            events.connectFailed();
            shutDown();
            throw failure;
        }
        this.extensions = new LeaseExtensions(core, nodes, dispatch, drift, losses);
        this.views = new OperatorViews(nodes, settings.keyPrefix());
        // before the keeper, whose passes write the record
        this.records = new IdentityRecords(core, nodes);
        this.leaseKeeper = LeaseKeeper.start("relock-redlock-renewer", core.clientId(), holds,
                new RedlockRenewal(nodes, dispatch, drift, events, extensions, losses, records, core.clientId(),
                        core.ticker()),
                Math.max(1, settings.defaultLease().toMillis() / 3), core.ticker());
        this.acquisitions = new Acquisitions(core, nodes, signals, cleanUps, drift, events, releaseCalls, releases,
                records, leaseKeeper);
        register();
        // after a reconnect the lease keeper renews at once: the outage already used up part of every validity
        nodes.watchConnects(leaseKeeper::renewSoon);
        log.debug("relock Redlock client {} connected to {} of {} nodes", core.clientId(), connected.yes(),
                nodes.size());
    }

    /**
     * Checks the URIs of {@code RelockClientBuilder.redlock(...)}.
     *
     * @return an immutable copy
     * @throws IllegalArgumentException if the count is not odd within 3..7, a URI is invalid or a
     *     Sentinel URI, or two name the same host and port
     */
    public static List<String> checkUris(List<String> uris) {
        return RedlockUris.check(uris);
    }

    /**
     * Called by {@code RelockClientBuilder.build()} with URIs that passed {@link #checkUris}.
     *
     * @throws RedisUnavailableException if fewer than a majority of the servers can be reached
     */
    public static RelockClient connect(List<String> uris, RelockSettings settings, ClientIdentity identity,
            ClockDrift drift, List<LeaseLostListener> listeners, Instrumentation instrumentation) {
        List<RedisURI> parsed = new ArrayList<>();
        checkUris(uris).forEach(uri -> parsed.add(RedlockUris.parse(uri)));
        parsed.forEach(uri -> RedisConnections.nameConnections(uri, identity));
        return new EngineClient(settings, identity, listeners,
                core -> new RedlockEngine(core, parsed, drift, instrumentation));
    }

    // ---- locks: acquisition, re-entry, lease, release ---------------------------------------------------------------

    @Override
    public LockEvents events() {
        return events;
    }

    @Override
    public RedlockAcquisition acquisition(String name, LockKeys keys, LockMode mode, String owner, long leaseMillis,
            boolean renewed) {
        return acquisitions.create(name, keys, mode, owner, leaseMillis, renewed);
    }

    /** Re-entries are counted in the JVM only; a longer explicit lease is granted by a majority first. */
    @Override
    public Hold reenter(Hold held, long lease, boolean renewed) {
        return extensions.reenter(held, lease, renewed);
    }

    @Override
    public void checkLease(String lockName, long leaseMillis, String given) {
        if (drift.validNanos(leaseMillis) <= 0) {
            throw new IllegalArgumentException("lease of lock '" + lockName + "' must be longer than the Redlock clock"
                    + " drift allowance of " + TimeUnit.NANOSECONDS.toMillis(drift.nanosFor(leaseMillis))
                    + " ms: " + given);
        }
    }

    @Override
    public void extendLease(Hold hold, long leaseMillis) {
        core.ensureOpen();
        extensions.extendLease(hold, leaseMillis);
    }

    /**
     * Gives up one hold; when it is the owner's last and {@code delayMillis} is positive, the lock
     * stays taken on the nodes for that long (the lease keeper no longer extends it).
     */
    @Override
    public void release(Hold hold, long delayMillis, boolean byHandle) {
        core.ensureOpen();
        releases.release(hold, delayMillis);
    }

    /**
     * One by one, in the keys' order, the same as on one Redis: two multi-locks never wait for each other in a
     * circle. Each member is a full Redlock lock: majority, validity, fencing.
     */
    @Override
    public RelockMultiLock multiLock(List<EngineLock> locks) {
        return OrderedMultiLock.oneByOne(locks, events, core.ticker());
    }

    @Override
    public String topology() {
        return "Redlock";
    }

    // ---- what operators see and do ----------------------------------------------------------------------------------

    @Override
    public LockInfo inspect(String name) {
        return views.inspect(name);
    }

    @Override
    public boolean isLocked(String name, LockKeys keys) {
        return views.inspect(name).isHeld();
    }

    @Override
    public Optional<Duration> remainingLease(String name, LockKeys keys) {
        LockInfo info = views.inspect(name);
        return info.isHeld() ? Optional.of(info.remainingLease()) : Optional.empty();
    }

    @Override
    public List<LockInfo> list(String nameGlob) {
        return views.list(nameGlob);
    }

    @Override
    public boolean forceUnlock(String name, LockKeys keys) {
        return releases.forceUnlock(name, keys);
    }

    @Override
    public Map<String, String> identityRecord(String clientId) {
        return records.read(clientId);
    }

    @Override
    public void register() {
        records.writeWhole();
    }

    @Override
    public Duration ping() {
        return nodes.ping();
    }

    // ---- what Redlock does not offer --------------------------------------------------------------------------------

    @Override
    public RelockSemaphore semaphore(String name) {
        throw semaphoresRefused();
    }

    @Override
    public LockInfo inspectSemaphore(String name) {
        throw semaphoresRefused();
    }

    @Override
    public RelockCondition condition(String lockName, LockKeys keys, String conditionName) {
        throw new UnsupportedOperationException("a Redlock client does not offer conditions (lock '" + lockName
                + "'): a signal must move a waiter into the lock's queue on a majority of nodes at once, which"
                + " Redlock's turns do not do yet; use a condition on a single Redis, Sentinel or Cluster client");
    }

    @Override
    public RelockCountDownLatch countDownLatch(String name) {
        throw new UnsupportedOperationException("a Redlock client does not offer count-down latches: a count kept on"
                + " independent nodes has no majority to agree on (a count-down that reached a minority of them is"
                + " neither counted nor undone); use a latch on a single Redis, Sentinel or Cluster client");
    }

    /**
     * Semaphores are refused for good: a majority vote bounds holders only for one permit. With
     * N nodes and P permits per node, H holders that each hold on a majority M of nodes need
     * H * M permit grants, and the nodes have N * P of them: with 5 nodes and 2 permits, 3 holders
     * fit (3 * 3 <= 5 * 2), one more than the permits.
     */
    private static UnsupportedOperationException semaphoresRefused() {
        return new UnsupportedOperationException("a Redlock client does not offer semaphores: a majority vote does"
                + " not bound more than one permit (with 5 nodes and 2 permits, 3 holders can each hold permits on"
                + " a majority of 3 nodes, as 3 x 3 <= 5 x 2); use a semaphore on a single Redis, Sentinel or"
                + " Cluster client");
    }

    // ---- closing ----------------------------------------------------------------------------------------------------

    /**
     * Stops the lease keeper, wakes every waiting thread (they fail with IllegalStateException),
     * releases every hold on every node (waiting at most the command timeout) and closes the
     * connections. Idempotent.
     */
    @Override
    public void close() {
        nodes.unwatchConnects();
        leaseKeeper.close();
        IllegalStateException closedNow = core.closedException();
        // before the connections close: an attempt in flight is cleaned up on every node
        acquisitions.failAll(closedNow);
        signals.wakeAll();
        // the identity record goes with the client (a crashed client's expires); after any write of it, on the
        // same connections, and no write follows
        List<CompletableFuture<Void>> sent = new ArrayList<>(records.delete());
        for (Hold hold : holds.all()) {
            Poll<Long> poll = releases.send(hold);
            // every node's reply, not a majority's: the connections close next, and a release still queued for a
            // slower node would be dropped with them, leaving the lock there until its lease ran out
            sent.add(poll.counted());
            hold.released();
            holds.remove(hold);
        }
        // a clean-up may wait for its attempt's reply first: up to two command timeouts
        List<CompletableFuture<?>> pending = new ArrayList<>(sent);
        pending.addAll(cleanUps.pending());
        try {
            CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new))
                    .get(2 * settings.commandTimeout().toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            log.warn("relock Redlock client {}: not every held lock could be released at close; their leases run"
                    + " out by themselves: {}", core.clientId(), e.toString());
        }
        shutDown();
    }

    private void shutDown() {
        events.close();
        nodes.shutDown();
    }

    // ---- the scripts' arguments -------------------------------------------------------------------------------------

    /**
     * How a hold is named in the scripts' arguments: the owner id for a write hold, {@code r|}
     * and the owner id for a read hold (the field of the lock hash that marks it).
     */
    static String member(LockMode mode, String owner) {
        return mode == LockMode.READ ? "r|" + owner : owner;
    }

    static String member(Hold hold) {
        return member(hold.mode, hold.owner);
    }

    @Override
    public String toString() {
        return "RedlockEngine[" + nodes + "]";
    }
}
