package dev.relock.internal.metrics;

import dev.relock.LockKind;
import dev.relock.RelockObservationContext;
import dev.relock.internal.engine.Hold;
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
 * registry, not per client. Thread-safe: counters are atomic, the per-registry table is
 * synchronized on itself.
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

    private static final Map<MeterRegistry, SharedGauges> GAUGES = new WeakHashMap<>();
    private static final Convention WAIT_CONVENTION = new Convention(RelockObservationContext.WAIT);
    private static final Convention HOLD_CONVENTION = new Convention(RelockObservationContext.HOLD);

    private final MeterRegistry meters;
    private final ObservationRegistry observations;
    private final Function<String, String> groupOfName;
    private final SharedGauges gauges;
    private final Counter renewalsOk;
    private final Counter renewalsFailed;
    private final StatefulConnection<?, ?> connection;
    private final String node;
    // the connections told by nodeConnected (a Redlock client's), each with its node; guarded by itself
    private final Map<StatefulConnection<?, ?>, String> otherNodes = new HashMap<>();
    // kind -> group -> meters; the kinds are fixed, the groups as many as metricsGroup makes
    private final Map<String, Map<String, GroupMeters>> byKindAndGroup = Map.of(
            LockKind.EXCLUSIVE.label(), new ConcurrentHashMap<>(), LockKind.SHARED.label(), new ConcurrentHashMap<>(),
            LockKind.SEMAPHORE.label(), new ConcurrentHashMap<>(), MULTI, new ConcurrentHashMap<>());

    private MicrometerLockEvents(MeterRegistry meters, ObservationRegistry observations,
            Function<String, String> groupOfName, StatefulConnection<?, ?> connection, String node) {
        this.meters = meters;
        this.observations = observations;
        this.groupOfName = groupOfName;
        this.connection = connection;
        this.node = node;
        synchronized (GAUGES) {
            this.gauges = GAUGES.computeIfAbsent(meters, registry -> new SharedGauges());
        }
        this.renewalsOk = renewals("ok");
        this.renewalsFailed = renewals("failed");
        if (connection != null) {
            gauges.nodeConnected(meters, node, connection);
        }
    }

    /** The registries are those of {@link Instrumentation}, at least one of them not null. */
    static LockEvents create(Instrumentation instrumentation, StatefulConnection<?, ?> connection, String node) {
        Object meters = instrumentation.meterRegistry();
        Object observations = instrumentation.observationRegistry();
        // an empty composite registry makes every meter a no-op: traces without metrics
        return new MicrometerLockEvents(
                meters == null ? new CompositeMeterRegistry() : (MeterRegistry) meters,
                observations == null ? ObservationRegistry.NOOP : (ObservationRegistry) observations,
                instrumentation.groupOfName(), connection, node);
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
                .publishPercentileHistogram()
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
        synchronized (otherNodes) {
            otherNodes.put(connection, node);
        }
        gauges.nodeConnected(meters, node, connection);
    }

    @Override
    public void close() {
        if (connection != null) {
            gauges.nodeClosed(meters, node, connection);
        }
        synchronized (otherNodes) {
            otherNodes.forEach((other, name) -> gauges.nodeClosed(meters, name, other));
            otherNodes.clear();
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

        GroupMeters(String kind, String group) {
            this.kind = kind;
            this.group = group;
            this.acquired = acquireTimer("acquired");
            this.timedOut = acquireTimer("timed_out");
            this.failed = acquireTimer("failed");
            this.holdTime = Timer.builder(HOLD_TIME)
                    .description("How long holds lasted, from acquisition to release or loss")
                    .tags("kind", kind, "group", group)
                    .publishPercentileHistogram()
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
                    .publishPercentileHistogram()
                    .register(meters);
        }
    }

    /** One acquisition: the {@value #ACQUIRE} timer, the {@value #WAITING} gauge and its observation. */
    private final class MeteredWait implements Wait {

        private final long startNanos = System.nanoTime();
        private final GroupMeters meters;
        private final RelockObservationContext context;
        private final Observation observation;

        MeteredWait(String name, GroupMeters meters) {
            this.meters = meters;
            meters.waiting.incrementAndGet();
            this.context = contextOf(name, meters);
            this.observation = observation(WAIT_CONVENTION, context);
        }

        private void end(Timer timer, String outcome) {
            meters.waiting.decrementAndGet();
            timer.record(System.nanoTime() - startNanos, TimeUnit.NANOSECONDS);
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
            end(meters.acquired, "acquired");
            if (hold != null) {
                held(hold);
            }
        }

        @Override
        public void timedOut() {
            end(meters.timedOut, "timed_out");
        }

        @Override
        public void failed(Throwable error) {
            observation.error(error);
            end(meters.failed, "failed");
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
     * counts by name, kind and group, and the command connections open to each node.
     */
    private static final class SharedGauges {

        private final Map<List<String>, AtomicInteger> counts = new ConcurrentHashMap<>();
        // guarded by this
        private final Map<String, Set<StatefulConnection<?, ?>>> connectionsByNode = new ConcurrentHashMap<>();

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

        synchronized void nodeConnected(MeterRegistry meters, String node, StatefulConnection<?, ?> connection) {
            Set<StatefulConnection<?, ?>> connections = connectionsByNode.get(node);
            if (connections == null) {
                Set<StatefulConnection<?, ?>> open = ConcurrentHashMap.newKeySet();
                connectionsByNode.put(node, open);
                connections = open;
                // 1 while any client's command connection to the node is connected
                Gauge.builder(NODE_UP, open, set -> set.stream().anyMatch(StatefulConnection::isOpen) ? 1 : 0)
                        .description("1 while the command connection to this Redis node is up, else 0")
                        .tags(Tags.of("node", node))
                        .strongReference(true)
                        .register(meters);
            }
            connections.add(connection);
        }

        synchronized void nodeClosed(MeterRegistry meters, String node, StatefulConnection<?, ?> connection) {
            Set<StatefulConnection<?, ?>> connections = connectionsByNode.get(node);
            if (connections == null) {
                return;
            }
            connections.remove(connection);
            if (connections.isEmpty()) {
                connectionsByNode.remove(node);
                Gauge gauge = meters.find(NODE_UP).tags("node", node).gauge();
                if (gauge != null) {
                    meters.remove(gauge);
                }
            }
        }
    }
}
