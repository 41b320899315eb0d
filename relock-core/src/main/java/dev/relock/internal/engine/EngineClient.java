package dev.relock.internal.engine;

import dev.relock.ClientIdentity;
import dev.relock.HeldLock;
import dev.relock.LeaseLost;
import dev.relock.LeaseLostListener;
import dev.relock.LockInfo;
import dev.relock.RelockClient;
import dev.relock.RelockClientBuilder;
import dev.relock.RelockCountDownLatch;
import dev.relock.RelockLock;
import dev.relock.RelockMultiLock;
import dev.relock.RelockReadWriteLock;
import dev.relock.RelockSemaphore;
import dev.relock.RelockSettings;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one {@link RelockClient}: what every deployment shares, over the {@link Engine} that does what
 * differs. It owns the client id, the table of this client's holds, the lease-lost listeners, the
 * closed flag, name checks, and the lock objects it hands out ({@link EngineLock}); the engine owns the
 * connections, the scripts and the lease keeping.
 *
 * <p>Owner ids are {@code <client id>:<thread id>}, or {@code <client id>:h<n>} for a hold owned by its
 * handle (asynchronous acquisitions, semaphore permits); the client id is 128 bits from a
 * {@link SecureRandom}, so no other client can guess an owner and release its lock. Every public
 * method of {@link RelockClient} may be called from any thread; after {@link #close()} they throw
 * IllegalStateException. The other public methods are for the engines, one of which lives in another
 * package.
 *
 * <p>Public because the engines live in packages of their own and the builder makes it through them.
 */
public final class EngineClient implements RelockClient {

    private static final Logger log = LoggerFactory.getLogger(EngineClient.class);
    private static final SecureRandom RANDOM = new SecureRandom();

    private final ClientIdentity identity;
    private final String clientId;
    private final RelockSettings settings;
    private final List<LeaseLostListener> listeners;
    private final HoldTable holds;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final AtomicLong holderIds = new AtomicLong();
    // a thread's owner id, made once: every hold of the thread shares the string, and a lock or
    // unlock does not concatenate it again
    private final ThreadLocal<String> ownerOfThread;
    // the clock of every deadline the engine decides; the system's in a client
    private final Ticker ticker;
    // set once, before the constructor returns
    private final Engine engine;

    /**
     * Connects: {@code connect} makes the engine for this client (it may keep the client, whose
     * engine it must not reach before it returns) or throws.
     */
    public EngineClient(RelockSettings settings, ClientIdentity identity, List<LeaseLostListener> listeners,
            Function<EngineClient, Engine> connect) {
        this(settings, identity, listeners, Ticker.SYSTEM, connect);
    }

    /** As the other constructor, with the clock the engine decides deadlines by: a hand-moved one in unit tests. */
    public EngineClient(RelockSettings settings, ClientIdentity identity, List<LeaseLostListener> listeners,
            Ticker ticker, Function<EngineClient, Engine> connect) {
        this.identity = identity;
        this.ticker = Objects.requireNonNull(ticker, "ticker");
        this.holds = new HoldTable(ticker);
        this.clientId = identity.clientId();
        this.ownerOfThread = ThreadLocal.withInitial(() -> ownerOfThread(Thread.currentThread().getId()));
        this.settings = settings;
        this.listeners = List.copyOf(listeners);
        this.engine = connect.apply(this);
    }

    /** The clock every deadline, back-off and grace of this client is decided by. */
    public Ticker ticker() {
        return ticker;
    }

    /** The engine, for tests and diagnostics that need what one deployment found (e.g. its server's features). */
    public Engine engine() {
        return engine;
    }

    // ---- the public API ---------------------------------------------------------------------

    @Override
    public RelockLock lock(String name) {
        checkOpenFor(name);
        return new EngineLock(this, name, LockKeys.of(settings.keyPrefix(), name), LockMode.WRITE);
    }

    @Override
    public RelockLock nonReentrantLock(String name) {
        checkOpenFor(name);
        return new EngineLock(this, name, LockKeys.of(settings.keyPrefix(), name), LockMode.WRITE, false);
    }

    @Override
    public RelockReadWriteLock readWriteLock(String name) {
        checkOpenFor(name);
        LockKeys keys = LockKeys.of(settings.keyPrefix(), name);
        return new ReadWriteLockView(name, new EngineLock(this, name, keys, LockMode.READ),
                new EngineLock(this, name, keys, LockMode.WRITE), engine.topology());
    }

    @Override
    public RelockSemaphore semaphore(String name) {
        checkOpenFor(name);
        return engine.semaphore(name);
    }

    @Override
    public RelockCountDownLatch countDownLatch(String name) {
        checkOpenFor(name);
        return engine.countDownLatch(name);
    }

    @Override
    public RelockMultiLock multiLock(String... names) {
        Objects.requireNonNull(names, "names");
        if (names.length == 0) {
            throw new IllegalArgumentException("a multi-lock needs at least one name");
        }
        Map<String, EngineLock> byKey = new TreeMap<>();
        for (String name : names) {
            checkName(name);
            LockKeys keys = LockKeys.of(settings.keyPrefix(), name);
            if (byKey.put(keys.lock(), new EngineLock(this, name, keys, LockMode.WRITE)) != null) {
                throw new IllegalArgumentException("lock name '" + name + "' appears twice in a multi-lock");
            }
        }
        ensureOpen();
        // one global order, the keys', on every engine: two multi-locks never wait for each other in a circle
        return engine.multiLock(new ArrayList<>(byKey.values()));
    }

    @Override
    public LockInfo inspect(String name) {
        checkOpenFor(name);
        return ClientRegistry.withIdentities(engine.inspect(name), engine::identityRecord);
    }

    @Override
    public LockInfo inspectSemaphore(String name) {
        checkOpenFor(name);
        return ClientRegistry.withIdentities(engine.inspectSemaphore(name), engine::identityRecord);
    }

    @Override
    public List<LockInfo> list(String nameGlob) {
        Objects.requireNonNull(nameGlob, "nameGlob");
        ensureOpen();
        return ClientRegistry.withIdentities(engine.list(nameGlob), engine::identityRecord);
    }

    @Override
    public List<HeldLock> heldLocks() {
        return holds.heldLocks();
    }

    @Override
    public Duration ping() {
        ensureOpen();
        return engine.ping();
    }

    @Override
    public ClientIdentity identity() {
        return identity;
    }

    @Override
    public String clientId() {
        return clientId;
    }

    @Override
    public RelockSettings settings() {
        return settings;
    }

    /**
     * Marks the client closed, then lets the engine release every hold, fail every acquisition under way and
     * close its connections. Idempotent.
     */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            engine.close();
            log.debug("relock client {} closed", clientId);
        }
    }

    @Override
    public String toString() {
        return "RelockClient[" + clientId + ", " + engine + "]";
    }

    // ---- for the engines and the lock objects -------------------------------------------------

    public void ensureOpen() {
        if (closed.get()) {
            throw closedException();
        }
    }

    public IllegalStateException closedException() {
        return new IllegalStateException("relock client " + clientId + " is closed");
    }

    public boolean isClosed() {
        return closed.get();
    }

    /** This client's holds, by lock, mode and owner. */
    public HoldTable holds() {
        return holds;
    }

    /** A new owner id for an acquisition that belongs to a handle, not a thread. */
    public String newHolderId() {
        return clientId + ":h" + holderIds.incrementAndGet();
    }

    /** Whether {@code owner} is one of {@link #newHolderId}'s: a hold that belongs to a handle, not a thread. */
    public boolean ownedByHandle(String owner) {
        return owner.startsWith(clientId + ":h");
    }

    public String ownerOfCurrentThread() {
        return ownerOfThread.get();
    }

    /** The owner id of the thread with this id ({@link Thread#getId()}) in this client, as it owns its holds. */
    public String ownerOfThread(long threadId) {
        return clientId + ":" + threadId;
    }

    /**
     * The lease argument of the acquiring methods (locks, multi-locks, semaphores) that asks for
     * {@link #defaultLeaseMillis()}, renewed by the lease keeper; any other is an explicit lease in ms.
     */
    public static final long RENEWED = 0;

    public long defaultLeaseMillis() {
        return settings.defaultLease().toMillis();
    }

    /**
     * Logs the loss of a hold the caller just marked lost ({@link Hold#lose}) and tells the listeners, on the
     * calling thread. A listener that throws is logged and the others are still told.
     */
    public void tellLost(Hold hold, String reason) {
        log.warn("relock: lease of lock '{}' (fencing token {}, owner {}, held {} ms) lost while held: {}",
                hold.lockName, hold.fencingToken, hold.owner, hold.heldMillis(ticker.nanoTime()), reason);
        LeaseLost event = new LeaseLost(hold.lockName, hold.fencingToken, reason);
        for (LeaseLostListener listener : listeners) {
            try {
                listener.leaseLost(event);
            } catch (RuntimeException e) {
                log.error("relock: lease-lost listener {} failed", listener, e);
            }
        }
    }

    /** Checks {@code name} ({@link #checkName}), then that this client is open. */
    private void checkOpenFor(String name) {
        checkName(name);
        ensureOpen();
    }

    /** Fails with a clear message unless {@code name} is a valid lock name. */
    public static void checkName(String name) {
        Objects.requireNonNull(name, "lock name");
        if (name.isBlank()) {
            throw new IllegalArgumentException("lock name must not be blank");
        }
        if (name.length() > RelockClientBuilder.MAX_NAME_LENGTH) {
            throw new IllegalArgumentException("lock name is " + name.length() + " characters long; at most "
                    + RelockClientBuilder.MAX_NAME_LENGTH + " are allowed");
        }
        // a name is sent as its UTF-8 bytes, which an unpaired surrogate does not have: it would be written as '?',
        // so that names differing there would share one lock's keys
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < name.length() && Character.isLowSurrogate(name.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                throw new IllegalArgumentException(String.format(
                        "lock name has an unpaired surrogate (\\u%04X) at index %d: it is not valid Unicode",
                        (int) c, i));
            }
        }
    }

    /** A new client id: 128 bits from a {@link SecureRandom}, as 32 hex digits. */
    public static String newClientId() {
        byte[] id = new byte[16];
        RANDOM.nextBytes(id);
        return HexFormat.of().formatHex(id);
    }
}
