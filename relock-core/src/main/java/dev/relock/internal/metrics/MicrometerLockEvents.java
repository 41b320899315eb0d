package dev.relock.internal.metrics;

import dev.relock.LockKind;
import dev.relock.RelockObservationContext;
import dev.relock.internal.engine.Hold;
import dev.relock.internal.engine.LockEvents;
import dev.relock.internal.engine.LockMode;
import io.lettuce.core.api.StatefulConnection;
import io.micrometer.common.KeyValues;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;
import io.micrometer.observation.ObservationRegistry;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * {@link LockEvents} as Micrometer meters and observations (the meters are listed in
 * docs/observability.md). The only class of relock-core, with {@link RelockObservationContext},
 * that names Micrometer types; loaded only when the builder was given a registry.
 *
 * <p>Gauges count across every client that reports to one {@link MeterRegistry}: a registry keeps
 * one gauge per name and tags, so the counters behind them live in a {@link SharedGauges} per
 * registry, not per client. The up gauge of each node a client is to use is registered when the client
 * is made, before it connects, so that a node that cannot be reached reads 0 rather than not at all.
 * Thread-safe: counters are atomic, the per-registry table is synchronized on itself.
 *
 * <p>Percentile histograms ({@code _bucket} series) are published only when the builder asked for them:
 * with them, each timer is some 70 series instead of 3. Without them the registry's own configuration
 * (a {@code MeterFilter}) may still turn them on for a meter.
 */
final class MicrometerLockEvents implements LockEvents {

    static final String ACQUIRE = "relock.acquire";
    static final String HOLD_TIME = "relock.hold.time";
    static final String RENEWALS = "relock.renewals";
    static final String LOST = "relock.leases.lost";
    static final String HELD = "relock.locks.held";
    static final String WAITING = "relock.waiting";
    static final String NODE_UP = "relock.node.up";
    static final String LATCH_WAIT = "relock.latch.wait";
    static final String CONDITION_WAIT = "relock.condition.wait";
    // the outcome tags of relock.acquire, beside CountedCall.SKIPPED
    static final String ACQUIRED = "acquired";
    static final String TIMED_OUT = "timed_out";
    static final String FAILED = "failed";

    private static final Map<MeterRegistry, SharedGauges> GAUGES = new WeakHashMap<>();
    private static final Convention WAIT_CONVENTION = new Convention(RelockObservationContext.WAIT);
    private static final Convention HOLD_CONVENTION = new Convention(RelockObservationContext.HOLD);

    private final MeterRegistry meters;
    private final ObservationRegistry observations;
    private final Function<String, String> groupOfName;
    private final SharedGauges gauges;
    // true, or null: left to the registry's configuration
    private final Boolean histograms;
    private final Counter renewalsOk;
    private final Counter renewalsFailed;
    // the nodes this client is to use, each counted by its up gauge from creation until close
    private final List<String> nodes;
    // the command connections told by nodeConnected, each with its node; guarded by itself, and taken before the
    // SharedGauges' lock
    private final Map<StatefulConnection<?, ?>, String> connections = new HashMap<>();
    // set by the first of connectFailed and close; guarded by connections
    private boolean left;
    // kind -> group -> meters; the kinds are fixed, the groups as many as metricsGroup makes
    private final Map<String, Map<String, GroupMeters>> byKindAndGroup = Map.of(
            LockKind.EXCLUSIVE.label(), new ConcurrentHashMap<>(), LockKind.SHARED.label(), new ConcurrentHashMap<>(),
            LockKind.SEMAPHORE.label(), new ConcurrentHashMap<>(), MULTI, new ConcurrentHashMap<>());

    private MicrometerLockEvents(MeterRegistry meters, ObservationRegistry observations, Instrumentation settings,
            List<String> nodes) {
        this.meters = meters;
        this.observations = observations;
        this.groupOfName = settings.groupOfName();
        this.histograms = settings.histograms() ? Boolean.TRUE : null;
        this.nodes = List.copyOf(nodes);
        synchronized (GAUGES) {
            this.gauges = GAUGES.computeIfAbsent(meters, registry -> new SharedGauges());
        }
        this.renewalsOk = renewals("ok");
        this.renewalsFailed = renewals("failed");
        for (String node : this.nodes) {
            gauges.nodeUsed(meters, node, this);
        }
    }

    /** The registries are those of {@link Instrumentation}, at least one of them not null. */
    static LockEvents create(Instrumentation instrumentation, List<String> nodes) {
        Object meters = instrumentation.meterRegistry();
        Object observations = instrumentation.observationRegistry();
        // an empty composite registry makes every meter a no-op: traces without metrics
        return new MicrometerLockEvents(
                meters == null ? new CompositeMeterRegistry() : (MeterRegistry) meters,
                observations == null ? ObservationRegistry.NOOP : (ObservationRegistry) observations,
                instrumentation, nodes);
    }

    private Counter renewals(String outcome) {
        return Counter.builder(RENEWALS)
                .description("Leases the lease keeper renewed (ok) or could not renew (failed), per hold")
                .tag("outcome", outcome)
                .register(meters);
    }

    private String group(String name) {
        String group = groupOfName.apply(name);
        return group == null ? Instrumentation.DEFAULT_GROUP : group;
    }

    /** The meters of one kind and group, registered on first use. */
    private GroupMeters meters(String kind, String group) {
        return byKindAndGroup.get(kind).computeIfAbsent(group, key -> new GroupMeters(kind, group));
    }

    @Override
    public Wait waitStarted(LockMode mode, String name) {
        return new MeteredWait(name, meters(LockEvents.kindOf(mode).label(), group(name)));
    }

    @Override
    public void latchWaitEnded(String name, long nanos, String outcome) {
        waitEnded(LATCH_WAIT, "Waits for count-down latches by outcome, from the call to its return", name, nanos,
                outcome);
    }

    @Override
    public void conditionWaitEnded(String name, long nanos, String outcome) {
        waitEnded(CONDITION_WAIT, "Waits in conditions by outcome, from the await to the signal, the timeout or the"
                + " interrupt (the lock's re-acquisition not counted)", name, nanos, outcome);
    }

    /** Records one wait in the timer {@code meter} of its group and outcome, registered on first use. */
    private void waitEnded(String meter, String description, String name, long nanos, String outcome) {
        Timer.builder(meter)
                .description(description)
                .tags("group", group(name), "outcome", outcome)
                .publishPercentileHistogram(histograms)
                .register(meters)
                .record(nanos, TimeUnit.NANOSECONDS);
    }

    @Override
    public Wait multiWaitStarted(List<String> names) {
        String group = group(names.get(0));
        for (String name : names) {
            if (!group(name).equals(group)) {
                group = "mixed";
                break;
            }
        }
        return new MeteredWait(String.join(",", names), meters(MULTI, group));
    }

    @Override
    public void held(Hold hold) {
        hold.observedBy(new MeteredHold(hold, meters(LockEvents.kindOf(hold.mode).label(), group(hold.lockName))));
    }

    @Override
    public void renewals(boolean ok, int holds) {
        (ok ? renewalsOk : renewalsFailed).increment(holds);
    }

    @Override
    public void nodeConnected(String node, StatefulConnection<?, ?> connection) {
        synchronized (connections) {
            // a Redlock node's connect that completes as its client shuts down counts for nothing
            if (left) {
                return;
            }
            connections.put(connection, node);
            gauges.nodeConnected(meters, node, this, connection);
        }
    }

    @Override
    public void connectFailed() {
        leave(true);
    }

    @Override
    public void close() {
        leave(false);
    }

    /**
     * This client uses its nodes no more; their up gauges go with the last client of each, unless kept. Once: a
     * close after {@link #connectFailed} (a Redlock client shuts down what it made) keeps them.
     */
    private void leave(boolean keepGauges) {
        synchronized (connections) {
            if (left) {
                return;
            }
            left = true;
            connections.forEach((connection, node) -> gauges.connectionClosed(node, connection));
            connections.clear();
            for (String node : nodes) {
                gauges.nodeLeft(meters, node, this, keepGauges);
            }
        }
    }

    /** A started observation, or the no-op one (and no context made) when nobody observes. */
    private Observation observation(Convention convention, RelockObservationContext context) {
        return context == null ? Observation.NOOP
                : Observation.createNotStarted(null, convention, () -> context, observations).start();
    }

    private RelockObservationContext contextOf(String lockName, GroupMeters meters) {
        return observations.isNoop() ? null : new RelockObservationContext(lockName, meters.kind, meters.group);
    }

    /** The meters of one kind and group: found once, then used without a registry lookup. */
    private final class GroupMeters {

        final String kind;
        final String group;
        final Timer acquired;
        final Timer timedOut;
        final Timer failed;
        final Timer holdTime;
        final Counter lost;
        final AtomicInteger held;
        final AtomicInteger waiting;
        // registered at the group's first skipped call: most groups have none
        private volatile Timer skipped;

        GroupMeters(String kind, String group) {
            this.kind = kind;
            this.group = group;
            this.acquired = acquireTimer(ACQUIRED);
            this.timedOut = acquireTimer(TIMED_OUT);
            this.failed = acquireTimer(FAILED);
            this.holdTime = Timer.builder(HOLD_TIME)
                    .description("How long holds lasted, from acquisition to release or loss")
                    .tags("kind", kind, "group", group)
                    .publishPercentileHistogram(histograms)
                    .register(meters);
            this.lost = Counter.builder(LOST)
                    .description("Leases lost while held (should stay 0)")
                    .tags("kind", kind, "group", group)
                    .register(meters);
            this.held = gauges.counter(meters, HELD, "Holds this JVM's clients have now", kind, group);
            this.waiting = gauges.counter(meters, WAITING, "Acquisitions under way now (queued or awaiting a reply)",
                    kind, group);
        }

        private Timer acquireTimer(String outcome) {
            return Timer.builder(ACQUIRE)
                    .description("Acquisitions by outcome, timed from the first attempt to the outcome")
                    .tags("kind", kind, "group", group, "outcome", outcome)
                    .publishPercentileHistogram(histograms)
                    .register(meters);
        }

        /** The timer of outcome {@code outcome}, one of those acquisitions end with. */
        Timer acquireTimerOf(String outcome) {
            return switch (outcome) {
                case ACQUIRED -> acquired;
                case TIMED_OUT -> timedOut;
                case FAILED -> failed;
                default -> skipped();
            };
        }

        private Timer skipped() {
            Timer timer = skipped;
            if (timer == null) {
                // racing threads get the same timer from the registry
                timer = acquireTimer(CountedCall.SKIPPED);
                skipped = timer;
            }
            return timer;
        }
    }

    /**
     * One acquisition: the {@value #ACQUIRE} timer, the {@value #WAITING} gauge and its observation. Started inside a
     * {@link CountedCall}, it is one try of that call: the call decides whether and when its outcome is recorded.
     */
    private final class MeteredWait implements Wait {

        private final long startNanos = System.nanoTime();
        private final GroupMeters meters;
        private final CountedCall call = CountedCall.current();
        private final RelockObservationContext context;
        private final Observation observation;

        MeteredWait(String name, GroupMeters meters) {
            this.meters = meters;
            meters.waiting.incrementAndGet();
            this.context = contextOf(name, meters);
            this.observation = observation(WAIT_CONVENTION, context);
        }

        private void end(String outcome) {
            meters.waiting.decrementAndGet();
            Timer timer = meters.acquireTimerOf(outcome);
            if (call == null) {
                timer.record(System.nanoTime() - startNanos, TimeUnit.NANOSECONDS);
            } else if (outcome.equals(FAILED)) {
                call.tryFailed(nanos -> timer.record(nanos, TimeUnit.NANOSECONDS));
            } else {
                call.tryEnded(nanos -> timer.record(nanos, TimeUnit.NANOSECONDS));
            }
            if (context != null) {
                context.outcome(outcome);
            }
            observation.stop();
        }

        @Override
        public void acquired(Hold hold) {
            if (hold != null && context != null) {
                context.fencingToken(hold.fencingToken);
            }
            end(ACQUIRED);
            if (hold != null) {
                held(hold);
            }
        }

        @Override
        public void timedOut() {
            end(call == null ? TIMED_OUT : call.notAcquiredOutcome(TIMED_OUT));
        }

        @Override
        public void failed(Throwable error) {
            observation.error(error);
            end(FAILED);
        }
    }

    /** One hold: the {@value #HELD} gauge while it lasts, then {@value #HOLD_TIME} and perhaps {@value #LOST}. */
    private final class MeteredHold implements HoldSpan {

        private final long startNanos = System.nanoTime();
        private final GroupMeters meters;
        private final AtomicBoolean ended = new AtomicBoolean();
        private final RelockObservationContext context;
        private final Observation observation;

        MeteredHold(Hold hold, GroupMeters meters) {
            this.meters = meters;
            meters.held.incrementAndGet();
            this.context = contextOf(hold.lockName, meters);
            if (context != null) {
                context.fencingToken(hold.fencingToken);
            }
            this.observation = observation(HOLD_CONVENTION, context);
        }

        @Override
        public void ended(Hold hold, boolean lost) {
            if (!ended.compareAndSet(false, true)) {
                return;
            }
            meters.held.decrementAndGet();
            meters.holdTime.record(System.nanoTime() - startNanos, TimeUnit.NANOSECONDS);
            if (lost) {
                meters.lost.increment();
            }
            if (context != null) {
                context.outcome(lost ? "lost" : "released");
            }
            observation.stop();
        }
    }

    /** relock's names and key values for its observations; a GlobalObservationConvention overrides it. */
    private record Convention(String name) implements ObservationConvention<RelockObservationContext> {

        @Override
        public String getName() {
            return name;
        }

        @Override
        public String getContextualName(RelockObservationContext context) {
            return name + " " + context.kind();
        }

        @Override
        public KeyValues getLowCardinalityKeyValues(RelockObservationContext context) {
            return KeyValues.of("kind", context.kind(), "group", context.group(), "outcome", context.outcome());
        }

        @Override
        public KeyValues getHighCardinalityKeyValues(RelockObservationContext context) {
            KeyValues values = KeyValues.of("lock.name", context.lockName());
            return context.fencingToken() == 0 ? values
                    : values.and("fencing.token", Long.toString(context.fencingToken()));
        }

        @Override
        public boolean supportsContext(Observation.Context context) {
            return context instanceof RelockObservationContext;
        }
    }

    /**
     * The state behind the gauges of one registry, shared by every client that reports to it:
     * counts by name, kind and group, and for each node the clients that use it and their command
     * connections. A node's up gauge is registered when the first client is to use it and removed
     * when the last one closes; a client that could not connect leaves it, reading 0.
     */
    private static final class SharedGauges {

        private final Map<List<String>, AtomicInteger> counts = new ConcurrentHashMap<>();
        // guarded by this
        private final Map<String, NodeUsers> nodes = new HashMap<>();

        AtomicInteger counter(MeterRegistry meters, String name, String description, String kind, String group) {
            return counts.computeIfAbsent(List.of(name, kind, group), key -> {
                AtomicInteger count = new AtomicInteger();
                Gauge.builder(name, count, AtomicInteger::get)
                        .description(description)
                        .tags("kind", kind, "group", group)
                        .strongReference(true)
                        .register(meters);
                return count;
            });
        }

        synchronized void nodeUsed(MeterRegistry meters, String node, Object client) {
            nodes.computeIfAbsent(node, key -> new NodeUsers(meters, key)).clients.add(client);
        }

        synchronized void nodeConnected(MeterRegistry meters, String node, Object client,
                StatefulConnection<?, ?> connection) {
            NodeUsers users = nodes.computeIfAbsent(node, key -> new NodeUsers(meters, key));
            users.clients.add(client);
            users.connections.add(connection);
        }

        synchronized void connectionClosed(String node, StatefulConnection<?, ?> connection) {
            NodeUsers users = nodes.get(node);
            if (users != null) {
                users.connections.remove(connection);
            }
        }

        synchronized void nodeLeft(MeterRegistry meters, String node, Object client, boolean keepGauge) {
            NodeUsers users = nodes.get(node);
            if (users == null) {
                return;
            }
            users.clients.remove(client);
            if (users.clients.isEmpty() && !keepGauge) {
                nodes.remove(node);
                meters.remove(users.gauge);
            }
        }
    }

    /** The clients of one registry that use one node, its up gauge, and their command connections to it. */
    private static final class NodeUsers {

        // guarded by the SharedGauges
        final Set<Object> clients = new HashSet<>();
        // read by the gauge on the registry's thread, changed under the SharedGauges
        final Set<StatefulConnection<?, ?>> connections = ConcurrentHashMap.newKeySet();
        final Gauge gauge;

        NodeUsers(MeterRegistry meters, String node) {
            // 1 while any client's command connection to the node is connected
            this.gauge = Gauge.builder(NODE_UP, connections,
                            open -> open.stream().anyMatch(StatefulConnection::isOpen) ? 1 : 0)
                    .description("1 while the command connection to this Redis node is up, else 0 (also before the"
                            + " first connection)")
                    .tags(Tags.of("node", node))
                    .strongReference(true)
                    .register(meters);
        }
    }
}
