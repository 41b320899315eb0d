package dev.relock.contract;

import static dev.relock.contract.Polling.soon;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.relock.HeldLock;
import dev.relock.LeaseLostException;
import dev.relock.LockHandle;
import dev.relock.LockKind;
import dev.relock.MultiLockHandle;
import dev.relock.PermitHandle;
import dev.relock.RelockClient;
import dev.relock.RelockLock;
import dev.relock.RelockObservationContext;
import dev.relock.RelockSemaphore;
import io.micrometer.common.KeyValues;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Metrics;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.GlobalObservationConvention;
import io.micrometer.observation.Observation;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What a client reports about its locks, as every deployment must report it (docs/observability.md,
 * "Metrics, traces and logs", names the same meters for every topology): meters in a {@link SimpleMeterRegistry}
 * and observations in a {@link TestObservationRegistry} for each outcome, holds until release or
 * loss, the gauges, groups that keep lock names out of tags, conventions; and {@link RelockClient#heldLocks()}.
 */
abstract class ObservabilityContract extends ContractBase {

    private SimpleMeterRegistry meters;
    private TestObservationRegistry observations;

    @BeforeEach
    void freshRegistries() {
        meters = new SimpleMeterRegistry();
        observations = TestObservationRegistry.create();
    }

    private RelockClient observedClient() {
        return newClient(builder -> builder.meterRegistry(meters).observationRegistry(observations));
    }

    private long acquisitions(String kind, String group, String outcome) {
        var timer = meters.find("relock.acquire").tags("kind", kind, "group", group, "outcome", outcome).timer();
        return timer == null ? 0 : timer.count();
    }

    private long holdTimes(String kind, String group) {
        var timer = meters.find("relock.hold.time").tags("kind", kind, "group", group).timer();
        return timer == null ? 0 : timer.count();
    }

    private double gauge(String name, String kind, String group) {
        var gauge = meters.find(name).tags("kind", kind, "group", group).gauge();
        return gauge == null ? Double.NaN : gauge.value();
    }

    private double counter(String name, String... tags) {
        var counter = meters.find(name).tags(tags).counter();
        return counter == null ? 0 : counter.count();
    }

    @Test
    void acquisitionsAreTimedByOutcomeAndHoldsObservedUntilReleaseOrLoss() throws Exception {
        RelockClient client = observedClient();
        long token;
        try (LockHandle held = client.lock("orders:1").acquire()) {
            token = held.fencingToken();
            assertThat(gauge("relock.locks.held", "exclusive", "all")).isEqualTo(1);
            TestObservationRegistryAssert.assertThat(observations)
                    .hasObservationWithNameEqualTo("relock.hold").that()
                    .hasBeenStarted()
                    .isNotStopped()
                    .hasHighCardinalityKeyValue("lock.name", "orders:1");
        }
        assertThat(acquisitions("exclusive", "all", "acquired")).isEqualTo(1);
        assertThat(acquisitions("exclusive", "all", "timed_out")).isZero();
        assertThat(holdTimes("exclusive", "all")).isEqualTo(1);
        assertThat(gauge("relock.locks.held", "exclusive", "all")).isZero();
        assertThat(gauge("relock.waiting", "exclusive", "all")).isZero();
        TestObservationRegistryAssert.assertThat(observations)
                .hasNumberOfObservationsEqualTo(2)
                .hasObservationWithNameEqualTo("relock.wait").that()
                .hasBeenStopped()
                .hasLowCardinalityKeyValue("kind", "exclusive")
                .hasLowCardinalityKeyValue("group", "all")
                .hasLowCardinalityKeyValue("outcome", "acquired")
                .hasHighCardinalityKeyValue("lock.name", "orders:1")
                .hasHighCardinalityKeyValue("fencing.token", Long.toString(token))
                .doesNotHaveError();
        TestObservationRegistryAssert.assertThat(observations)
                .hasObservationWithNameEqualTo("relock.hold").that()
                .hasBeenStopped()
                .hasLowCardinalityKeyValue("outcome", "released")
                .hasHighCardinalityKeyValue("fencing.token", Long.toString(token));

        // a wait that ends without the lock, and one that is counted as waiting until it gets it
        RelockLock held = newClient().lock("busy");
        held.lock();
        assertThat(client.lock("busy").tryLock(50, TimeUnit.MILLISECONDS)).isFalse();
        assertThat(acquisitions("exclusive", "all", "timed_out")).isEqualTo(1);
        TestObservationRegistryAssert.assertThat(observations)
                .hasNumberOfObservationsEqualTo(3)
                .hasAnObservation(observation -> observation
                        .hasNameEqualTo("relock.wait")
                        .hasLowCardinalityKeyValue("outcome", "timed_out") // set when the wait stopped
                        .hasHighCardinalityKeyValue("lock.name", "busy")
                        .doesNotHaveHighCardinalityKeyValue("fencing.token", "0"));

        CompletableFuture<Boolean> waiter = inNewThread("waiter", () -> {
            RelockLock lock = client.lock("busy");
            boolean got = lock.tryLock(HANG.toMillis(), TimeUnit.MILLISECONDS);
            lock.unlock();
            return got;
        });
        soon().until(() -> gauge("relock.waiting", "exclusive", "all") == 1);
        held.unlock();
        assertThat(resultOf(waiter)).isTrue();
        assertThat(gauge("relock.waiting", "exclusive", "all")).isZero();
        assertThat(acquisitions("exclusive", "all", "acquired")).isEqualTo(2);
        assertThat(meters.find("relock.acquire").tags("outcome", "acquired").timer().totalTime(TimeUnit.NANOSECONDS))
                .as("wait time recorded").isPositive();
        assertThat(meters.find("relock.acquire").tags("outcome", "timed_out").timer().totalTime(TimeUnit.MILLISECONDS))
                .as("ms the timed-out wait of 50 ms was recorded with").isGreaterThanOrEqualTo(40);

        // a lease lost while held: counted, and the hold ends there
        assertThat(holdTimes("exclusive", "all")).isEqualTo(2);
        // a short lease, renewed every third of it: a renewal soon. Not shorter: on a busy machine a thread may wait
        // a few hundred ms for a core, and a lease lost to such a stall would never see the renewal waited for here
        RelockClient losing = newClient(builder -> builder
                .defaultLease(Duration.ofSeconds(1))
                .meterRegistry(meters)
                .observationRegistry(observations));
        LockHandle lost = losing.lock("lost").acquire();
        soon("a renewal counted").failFast("the lease was lost before any renewal", () -> !lost.isValid())
                .until(() -> counter("relock.renewals", "outcome", "ok") >= 1);
        assertThat(counter("relock.leases.lost", "kind", "exclusive", "group", "all")).isZero();
        // the hold vanishes on the servers; its owner finds out from force-unlock's message to its client (one
        // server, plain pub/sub) or at its next renewal (Redlock; a Cluster with sharded pub/sub, whose lock channel
        // the holder's client does not listen to)
        assertThat(client.lock("lost").forceUnlock()).isTrue();
        soon().until(() -> counter("relock.leases.lost", "kind", "exclusive", "group", "all") == 1);
        assertThat(counter("relock.renewals", "outcome", "failed")).as("renewals that found the loss").isLessThanOrEqualTo(1);
        assertThat(holdTimes("exclusive", "all")).isEqualTo(3);
        assertThat(gauge("relock.locks.held", "exclusive", "all")).isZero();
        assertThat(losing.heldLocks()).as("a lost hold is no longer listed").isEmpty();
        TestObservationRegistryAssert.assertThat(observations)
                .hasAnObservation(observation -> observation
                        .hasNameEqualTo("relock.hold")
                        .hasLowCardinalityKeyValue("outcome", "lost") // set when the hold stopped
                        .hasHighCardinalityKeyValue("lock.name", "lost"));
        assertThatThrownBy(lost::close).isInstanceOf(LeaseLostException.class);
        assertThat(holdTimes("exclusive", "all")).as("recorded once, at the loss").isEqualTo(3);
    }

    @Test
    void everyKindIsTaggedWithItsGroupNoLockNameBecomesATagAConventionMayRenameThemAndHeldLocksListsThem() throws Exception {
        RelockClient client = newClient(builder -> builder
                .meterRegistry(meters)
                .observationRegistry(observations)
                // a name without a colon has no group: null counts as "all"
                .metricsGroup(name -> name.contains(":") ? name.substring(0, name.indexOf(':')) : null));
        try (LockHandle read = client.readWriteLock("report:1").readLock().acquireAsync().toCompletableFuture()
                .get(HANG.toMillis(), TimeUnit.MILLISECONDS)) {
            assertThat(gauge("relock.locks.held", "shared", "report")).isEqualTo(1);
        }
        List<String> names = new ArrayList<>(List.of("report:1", "account:1", "account:2", "ungrouped"));
        if (deployment().servesSemaphores()) {
            RelockSemaphore exports = client.semaphore("exports:a");
            exports.trySetPermits(2);
            try (PermitHandle permits = exports.acquire(1)) {
                assertThat(gauge("relock.locks.held", "semaphore", "exports")).isEqualTo(1);
            }
            assertThat(acquisitions("semaphore", "exports", "acquired")).isEqualTo(1);
            assertThat(holdTimes("semaphore", "exports")).isEqualTo(1);
            names.add("exports:a");
        }
        try (MultiLockHandle both = client.multiLock("account:1", "account:2").acquire()) {
            assertThat(gauge("relock.locks.held", "exclusive", "account")).isEqualTo(2);
        }
        RelockLock ungrouped = client.lock("ungrouped");
        ungrouped.lock();
        ungrouped.unlock();
        assertThat(acquisitions("shared", "report", "acquired")).isEqualTo(1);
        assertThat(acquisitions("multi", "account", "acquired")).isEqualTo(1);
        assertThat(acquisitions("exclusive", "all", "acquired")).isEqualTo(1);
        assertThat(holdTimes("exclusive", "account")).isEqualTo(2);
        assertThat(holdTimes("shared", "report")).isEqualTo(1);
        assertThat(meters.find("relock.node.up").gauges()).as("up gauges of the servers").isNotEmpty();

        List<String> tagValues = meters.getMeters().stream()
                .map(Meter::getId)
                .flatMap(id -> id.getTags().stream())
                .map(Tag::getValue)
                .toList();
        assertThat(tagValues).doesNotContainAnyElementsOf(names);
        TestObservationRegistryAssert.assertThat(observations)
                .hasAnObservation(observation -> observation
                        .hasNameEqualTo("relock.wait")
                        .hasLowCardinalityKeyValue("kind", "multi")
                        .hasHighCardinalityKeyValue("lock.name", "account:1,account:2"));

        // observations alone, without meters, under a global convention that overrides relock's own
        TestObservationRegistry custom = TestObservationRegistry.create();
        custom.observationConfig().observationConvention(
                new GlobalObservationConvention<RelockObservationContext>() {
                    @Override
                    public boolean supportsContext(Observation.Context context) {
                        return context instanceof RelockObservationContext;
                    }

                    @Override
                    public String getName() {
                        return "custom.lock";
                    }

                    @Override
                    public KeyValues getLowCardinalityKeyValues(RelockObservationContext context) {
                        return KeyValues.of("state", context.outcome());
                    }
                });
        RelockLock lock = newClient(builder -> builder.observationRegistry(custom)).lock("custom");
        lock.lock();
        lock.unlock();
        TestObservationRegistryAssert.assertThat(custom)
                .hasNumberOfObservationsWithNameEqualTo("custom.lock", 2)
                .hasAnObservation(observation -> observation.hasLowCardinalityKeyValue("state", "acquired"))
                .hasAnObservation(observation -> observation.hasLowCardinalityKeyValue("state", "released"));
        assertThat(Metrics.globalRegistry.find("relock.acquire").meters()).as("no meter registry given: no meters anywhere")
                .isEmpty();

        // what the client holds, as it lists it without asking the servers
        Instant before = Instant.now().minusMillis(1);
        RelockLock exclusive = client.lock("held:x");
        exclusive.lock();
        assertThat(exclusive.tryLock(0, 5, TimeUnit.SECONDS)).as("re-entered").isTrue();
        RelockLock read = client.readWriteLock("held:r").readLock();
        assertThat(read.tryLock(0, 5, TimeUnit.SECONDS)).isTrue();
        PermitHandle permit = null;
        if (deployment().servesSemaphores()) {
            client.semaphore("held:s").trySetPermits(1);
            permit = client.semaphore("held:s").acquire(1);
        }

        List<HeldLock> held = client.heldLocks();
        List<String> heldNames = new ArrayList<>(List.of("held:r", "held:x"));
        List<LockKind> kinds = new ArrayList<>(List.of(LockKind.SHARED, LockKind.EXCLUSIVE));
        List<Boolean> renewed = new ArrayList<>(List.of(false, true));
        if (permit != null) {
            heldNames.add(1, "held:s");
            kinds.add(1, LockKind.SEMAPHORE);
            renewed.add(1, true);
        }
        assertThat(held).extracting(HeldLock::name).as("one entry per lock, re-entries included, by name")
                .isEqualTo(heldNames);
        assertThat(held).extracting(HeldLock::kind).isEqualTo(kinds);
        assertThat(held).extracting(HeldLock::renewed).isEqualTo(renewed);
        assertThat(held).allSatisfy(hold -> {
            assertThat(hold.owner()).startsWith(client.clientId() + ":");
            assertThat(hold.fencingToken()).isPositive();
            assertThat(hold.heldSince()).isBetween(before, Instant.now());
            assertThat(hold.remainingLease()).isPositive().isLessThanOrEqualTo(client.settings().defaultLease());
        });
        assertThat(held.get(0).remainingLease()).as("an explicit lease of 5 s").isLessThanOrEqualTo(Duration.ofSeconds(5));
        assertThat(held.get(held.size() - 1).fencingToken()).isEqualTo(client.inspect("held:x").fencingToken());

        if (permit != null) {
            permit.close();
        }
        read.unlock();
        exclusive.unlock();
        exclusive.unlock();
        assertThat(client.heldLocks()).isEmpty();
    }
}
