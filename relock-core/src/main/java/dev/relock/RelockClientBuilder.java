package dev.relock;

import dev.relock.internal.engine.EngineClient;
import dev.relock.internal.metrics.Instrumentation;
import dev.relock.internal.redlock.ClockDrift;
import dev.relock.internal.redlock.RedlockEngine;
import dev.relock.internal.single.SingleServerEngine;
import io.lettuce.core.RedisClient;
import io.lettuce.core.cluster.RedisClusterClient;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;

/**
 * Configures a {@link RelockClient}. Not thread-safe; build once.
 *
 * <table>
 *   <caption>Settings</caption>
 *   <tr><th>setting</th><th>default</th></tr>
 *   <tr><td>one of {@link #redisUri(String)}, {@link #redisClient(RedisClient)},
 *       {@link #redisClusterUris(String...)}, {@link #redisClusterClient(RedisClusterClient)},
 *       {@link #redlock(String...)}</td>
 *       <td>required</td></tr>
 *   <tr><td>{@link #keyPrefix(String)}</td><td>{@code relock}</td></tr>
 *   <tr><td>{@link #defaultLease(Duration)}</td><td>30 s</td></tr>
 *   <tr><td>{@link #commandTimeout(Duration)}</td><td>3 s</td></tr>
 *   <tr><td>{@link #handoffGrace(Duration)}</td><td>1 s</td></tr>
 *   <tr><td>{@link #clockDrift(double, Duration)} (Redlock only)</td><td>1% of the lease + 50 ms</td></tr>
 *   <tr><td>{@link #meterRegistry} and {@link #observationRegistry}</td><td>none: nothing measured</td></tr>
 *   <tr><td>{@link #metricsGroup(Function)}</td><td>every name in group {@code all}</td></tr>
 *   <tr><td>{@link #metricsHistograms(boolean)}</td><td>off: timers without percentile histograms</td></tr>
 * </table>
 *
 * <p>Micrometer is an optional dependency: without it on the class path this class and the client
 * work as usual, as long as {@link #meterRegistry} and {@link #observationRegistry} are not called.
 */
public final class RelockClientBuilder {

    /** The longest lock name accepted, in characters. */
    public static final int MAX_NAME_LENGTH = 1024;

    /** The shortest default lease accepted: the lease keeper renews every third of it. */
    public static final Duration MIN_DEFAULT_LEASE = Duration.ofMillis(30);

    private String redisUri;
    private RedisClient redisClient;
    private List<String> redisClusterUris;
    private RedisClusterClient redisClusterClient;
    private String keyPrefix = "relock";
    private Duration defaultLease = Duration.ofSeconds(30);
    private Duration commandTimeout = Duration.ofSeconds(3);
    private Duration handoffGrace = Duration.ofSeconds(1);
    private ReplicationGuard replicationGuard;
    private final List<LeaseLostListener> leaseLostListeners = new ArrayList<>();
    private List<String> redlockUris;
    private ClockDrift clockDrift;
    // typed Object so this class loads without Micrometer: a MeterRegistry, an ObservationRegistry
    private Object meterRegistry;
    private Object observationRegistry;
    private Function<String, String> metricsGroup = Instrumentation.NONE.groupOfName();
    private boolean metricsHistograms;
    private String applicationName;
    private String clientLabel;

    RelockClientBuilder() {}

    /** The Redis to connect to, as a Lettuce URI ({@code redis://}, {@code rediss://}, with user and password). */
    public RelockClientBuilder redisUri(String redisUri) {
        this.redisUri = Objects.requireNonNull(redisUri, "redisUri");
        return this;
    }

    /**
     * An existing Lettuce client to open relock's two connections with, instead of a URI. relock
     * does not shut it down; its options (timeouts, reconnects, TLS) are the caller's.
     */
    public RelockClientBuilder redisClient(RedisClient redisClient) {
        this.redisClient = Objects.requireNonNull(redisClient, "redisClient");
        return this;
    }

    /**
     * Runs every lock on Redlock over these independent Redis masters instead of one Redis: a
     * lock is held when a majority ({@code n/2 + 1}) of them granted it within its lease minus
     * the time the requests took and the clock drift (see docs/redlock.md for the
     * guarantees and what they assume). Exclusive and read-write locks are available on Redlock.
     *
     * @param redisUris 3, 5 or 7 Lettuce URIs ({@code redis://…}, {@code rediss://…}) of distinct
     *     servers, no Sentinel
     * @throws IllegalArgumentException if the count is not odd and within 3..7, a URI is invalid,
     *     names a Sentinel, or two name the same server
     */
    public RelockClientBuilder redlock(String... redisUris) {
        return redlockUris(Arrays.asList(Objects.requireNonNull(redisUris, "redisUris")));
    }

    /** As {@link #redlock(String...)}. */
    public RelockClientBuilder redlockUris(List<String> redisUris) {
        this.redlockUris = RedlockEngine.checkUris(redisUris);
        return this;
    }

    /**
     * A Redis Cluster to connect to, by the Lettuce URIs of one or more of its nodes (seeds);
     * relock learns the rest of the cluster from them. Every key of one lock or semaphore shares
     * a hash tag, so it lives in one slot; docs/sentinel-and-cluster.md, "Redis Cluster",
     * says what a failover can lose.
     *
     * @throws IllegalArgumentException if no URI is given
     */
    public RelockClientBuilder redisClusterUris(String... seedUris) {
        Objects.requireNonNull(seedUris, "redisClusterUris");
        if (seedUris.length == 0) {
            throw new IllegalArgumentException("redisClusterUris needs the URI of at least one cluster node");
        }
        for (int i = 0; i < seedUris.length; i++) {
            Objects.requireNonNull(seedUris[i], "redisClusterUris[" + i + "]");
        }
        this.redisClusterUris = List.of(seedUris);
        return this;
    }

    /**
     * How much a Redlock lease is shortened, on top of the time its requests took, to allow for
     * the servers' clocks running faster than this JVM's: {@code lease * factorOfLease + fixed}.
     * Default 1% of the lease plus 50 ms.
     *
     * @param factorOfLease 0 to 0.5
     * @param fixed zero or more
     * @throws IllegalArgumentException if either is out of range
     */
    public RelockClientBuilder clockDrift(double factorOfLease, Duration fixed) {
        this.clockDrift = ClockDrift.of(factorOfLease, fixed);
        return this;
    }

    /**
     * An existing Lettuce cluster client to open relock's two connections with, instead of seed
     * URIs. relock does not shut it down; its options (timeouts, reconnects, topology refresh,
     * TLS) are the caller's. Enable adaptive topology refresh on it, so a failover or a resharding
     * is noticed before leases run out.
     */
    public RelockClientBuilder redisClusterClient(RedisClusterClient redisClusterClient) {
        this.redisClusterClient = Objects.requireNonNull(redisClusterClient, "redisClusterClient");
        return this;
    }

    /**
     * The prefix of every key and channel, so several applications can share one Redis.
     *
     * @throws IllegalArgumentException if blank, or if it contains '{' or '}' (which would break the
     *     hash tag that keeps a lock's keys in one cluster slot)
     */
    public RelockClientBuilder keyPrefix(String keyPrefix) {
        Objects.requireNonNull(keyPrefix, "keyPrefix");
        if (keyPrefix.isBlank()) {
            throw new IllegalArgumentException("keyPrefix must not be blank");
        }
        if (keyPrefix.indexOf('{') >= 0 || keyPrefix.indexOf('}') >= 0) {
            throw new IllegalArgumentException("keyPrefix must not contain '{' or '}': " + keyPrefix);
        }
        this.keyPrefix = keyPrefix;
        return this;
    }

    /**
     * The application's name, part of the client's {@link ClientIdentity} and of the name of every Redis connection
     * relock opens ({@code CLIENT LIST}); the Spring Boot starter sets {@code spring.application.name}.
     *
     * @throws IllegalArgumentException if blank or longer than 64 characters
     */
    public RelockClientBuilder applicationName(String applicationName) {
        this.applicationName = identityPart(applicationName, "applicationName");
        return this;
    }

    /**
     * A free label (an instance, a role, a shard) that tells this client apart from others of the same application
     * on the same host, in its {@link ClientIdentity} and its connections' names.
     *
     * @throws IllegalArgumentException if blank or longer than 64 characters
     */
    public RelockClientBuilder clientLabel(String clientLabel) {
        this.clientLabel = identityPart(clientLabel, "clientLabel");
        return this;
    }

    private static String identityPart(String value, String what) {
        Objects.requireNonNull(value, what);
        if (value.isBlank() || value.length() > 64) {
            throw new IllegalArgumentException(what + " must be 1 to 64 characters, not blank: '" + value + "'");
        }
        return value.strip();
    }

    /**
     * The lease of holds taken without an explicit lease. The lease keeper renews them every third
     * of it, so a crashed holder's lock frees itself after at most this long.
     *
     * @throws IllegalArgumentException if shorter than {@link #MIN_DEFAULT_LEASE}
     */
    public RelockClientBuilder defaultLease(Duration defaultLease) {
        Objects.requireNonNull(defaultLease, "defaultLease");
        if (defaultLease.compareTo(MIN_DEFAULT_LEASE) < 0) {
            throw new IllegalArgumentException(
                    "defaultLease must be at least " + MIN_DEFAULT_LEASE.toMillis() + " ms: " + defaultLease);
        }
        this.defaultLease = defaultLease;
        return this;
    }

    /**
     * How long one Redis command may take. A caller never waits longer than this for one reply;
     * {@code tryLock(wait)} never returns later than its wait plus this.
     *
     * @throws IllegalArgumentException if not positive
     */
    public RelockClientBuilder commandTimeout(Duration commandTimeout) {
        this.commandTimeout = positive(commandTimeout, "commandTimeout");
        return this;
    }

    /**
     * How long the waiter at the head of a lock's queue keeps its turn after a release. A waiter
     * that crashed holds up the others for at most this long.
     *
     * @throws IllegalArgumentException if not positive
     */
    public RelockClientBuilder handoffGrace(Duration handoffGrace) {
        this.handoffGrace = positive(handoffGrace, "handoffGrace");
        return this;
    }

    /**
     * Guards every fresh acquisition with {@code WAIT replicas timeout}: an acquisition that fewer
     * replicas acknowledged within {@code timeout} is undone and counts as not acquired
     * ({@link ReplicationGuard.OnShortfall#RELEASE_AND_RETRY}). Off by default.
     *
     * @throws IllegalArgumentException as {@link ReplicationGuard}'s constructor
     */
    public RelockClientBuilder replicationGuard(int replicas, Duration timeout) {
        return replicationGuard(new ReplicationGuard(replicas, timeout, ReplicationGuard.OnShortfall.RELEASE_AND_RETRY));
    }

    /**
     * Guards every fresh acquisition as {@code guard} says; null turns the guard off. Guarded
     * acquisitions and their {@code WAIT}s go over a second connection of their own (on Redis
     * Cluster: one to each master, opened when an acquisition first needs it), so a {@code WAIT}
     * never delays renewals or the unguarded commands of the client. Not with Redlock, whose
     * independent masters have no replicas to wait for.
     *
     * @throws IllegalArgumentException at {@link #build()}, if the guard's timeout is not shorter
     *     than the command timeout
     */
    public RelockClientBuilder replicationGuard(ReplicationGuard guard) {
        this.replicationGuard = guard;
        return this;
    }

    /** Adds a listener told of every hold whose lease is lost while held. */
    public RelockClientBuilder leaseLostListener(LeaseLostListener listener) {
        leaseLostListeners.add(Objects.requireNonNull(listener, "listener"));
        return this;
    }

    /**
     * Reports to this registry the meters listed in docs/observability.md:
     * acquisitions by outcome with their wait, hold times, renewals, leases lost, holds and
     * waiters now, and whether the Redis node is connected. The up gauge of each node is registered by
     * {@link #build()} before it connects, so a node that cannot be reached reads 0; a build that fails
     * leaves it so. Needs micrometer-core on the class path.
     */
    public RelockClientBuilder meterRegistry(MeterRegistry registry) {
        this.meterRegistry = Objects.requireNonNull(registry, "meterRegistry");
        return this;
    }

    /**
     * Reports every wait ({@value RelockObservationContext#WAIT}) and every hold
     * ({@value RelockObservationContext#HOLD}) as an observation to this registry, for traces (see
     * {@link RelockObservationContext} for the key values). Needs micrometer-observation on the
     * class path.
     */
    public RelockClientBuilder observationRegistry(ObservationRegistry registry) {
        this.observationRegistry = Objects.requireNonNull(registry, "observationRegistry");
        return this;
    }

    /**
     * Maps a lock name to the value of the {@code group} tag of its meters and observations. By
     * default every name is in group {@code all}: lock names are often made of ids
     * ({@code invoice:4711}), and every distinct tag value is a time series of its own in the
     * metrics backend, so names as tags would grow without bound. Map names to a few groups, for
     * example {@code name -> name.substring(0, name.indexOf(':'))}. A null result counts as
     * {@code all}. Called once per acquisition while a registry is set; it must be fast and must not
     * throw. Lock names do appear in observations, as a high-cardinality key value (traces only).
     */
    public RelockClientBuilder metricsGroup(Function<String, String> nameToGroup) {
        this.metricsGroup = Objects.requireNonNull(nameToGroup, "metricsGroup");
        return this;
    }

    /**
     * Whether the timers ({@code relock.acquire}, {@code relock.hold.time}, {@code relock.condition.wait},
     * {@code relock.latch.wait}) publish percentile histograms, for quantiles across instances
     * ({@code histogram_quantile} in Prometheus). Off by default: a histogram makes each timer some 70 time series
     * instead of 3 (count, sum, max), per kind, group and outcome; docs/observability.md gives the counts. Off, a
     * {@code MeterFilter} of the registry can still turn them on for one meter.
     */
    public RelockClientBuilder metricsHistograms(boolean enabled) {
        this.metricsHistograms = enabled;
        return this;
    }

    /**
     * Connects and returns the client.
     *
     * @throws IllegalStateException unless exactly one of a URI, a Lettuce client, cluster seed
     *     URIs, a Lettuce cluster client and Redlock URIs was given; if a clock drift was given
     *     without Redlock URIs, or a replication guard with Redlock URIs
     * @throws IllegalArgumentException if a URI is not a valid Redis URI
     * @throws RelockException if Redis (for Redlock: a majority of the servers) cannot be reached
     */
    public RelockClient build() {
        List<String> given = new ArrayList<>();
        if (redisUri != null) {
            given.add("redisUri");
        }
        if (redisClient != null) {
            given.add("redisClient");
        }
        if (redisClusterUris != null) {
            given.add("redisClusterUris");
        }
        if (redisClusterClient != null) {
            given.add("redisClusterClient");
        }
        if (redlockUris != null) {
            given.add("redlock");
        }
        if (given.size() != 1) {
            throw new IllegalStateException("set exactly one of redisUri(...), redisClient(...), redisClusterUris(...),"
                    + " redisClusterClient(...) and redlock(...); " + (given.isEmpty() ? "none was set" : "got " + given));
        }
        if (replicationGuard != null && replicationGuard.timeout().compareTo(commandTimeout) >= 0) {
            throw new IllegalArgumentException("replicationGuard timeout (" + replicationGuard.timeout()
                    + ") must be shorter than commandTimeout (" + commandTimeout + "): one WAIT is one command");
        }
        if (replicationGuard != null && redlockUris != null) {
            throw new IllegalStateException("replicationGuard(...) does not apply to Redlock: its masters are independent,"
                    + " with no replicas to wait for; Redlock's safety comes from the majority and delayed restarts"
                    + " (see docs/redlock.md)");
        }
        RelockSettings settings = new RelockSettings(keyPrefix, defaultLease, commandTimeout, handoffGrace,
                replicationGuard);
        Instrumentation instrumentation = new Instrumentation(meterRegistry, observationRegistry, metricsGroup,
                metricsHistograms);
        ClientIdentity identity = ClientIdentity.of(EngineClient.newClientId(), applicationName, clientLabel);
        if (redlockUris != null) {
            return RedlockEngine.connect(redlockUris, settings, identity,
                    clockDrift == null ? ClockDrift.DEFAULT : clockDrift, List.copyOf(leaseLostListeners),
                    instrumentation);
        }
        if (clockDrift != null) {
            throw new IllegalStateException("clockDrift(...) applies only to Redlock clients: set redlock(...)");
        }
        if (redisClusterUris != null || redisClusterClient != null) {
            return SingleServerEngine.connectCluster(redisClusterUris, redisClusterClient, settings, identity,
                    List.copyOf(leaseLostListeners), instrumentation);
        }
        return SingleServerEngine.connect(redisUri, redisClient, settings, identity, List.copyOf(leaseLostListeners),
                instrumentation);
    }

    private static Duration positive(Duration value, String what) {
        Objects.requireNonNull(value, what);
        if (value.isZero() || value.isNegative()) {
            throw new IllegalArgumentException(what + " must be positive: " + value);
        }
        return value;
    }
}
