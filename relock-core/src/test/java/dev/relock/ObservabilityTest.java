package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.relock.testredis.RedisServer;
import io.micrometer.common.KeyValues;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.GlobalObservationConvention;
import io.micrometer.observation.Observation;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Meters (in a {@link SimpleMeterRegistry}) and observations (in a {@link TestObservationRegistry})
 * of real acquisitions against the fixture server: each outcome, holds until release or loss, the
 * gauges, the groups that keep lock names out of tags; and {@link RelockClient#heldLocks()} and
 * {@link RelockClient#ping()}.
 */
class ObservabilityTest extends OneServerTestBase {

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
    void anAcquisitionIsTimedAndItsHoldObservedUntilRelease() {
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
    }

    @Test
    void aWaitThatEndsWithoutTheLockIsTimedOutAndCountedAsWaitingMeanwhile() throws Exception {
        RelockClient holder = newClient();
        RelockClient client = observedClient();
        RelockLock held = holder.lock("busy");
        held.lock();
        assertThat(client.lock("busy").tryLock(50, TimeUnit.MILLISECONDS)).isFalse();
        assertThat(acquisitions("exclusive", "all", "timed_out")).isEqualTo(1);
        TestObservationRegistryAssert.assertThat(observations)
                .hasNumberOfObservationsEqualTo(1)
                .hasObservationWithNameEqualTo("relock.wait").that()
                .hasBeenStopped()
                .hasLowCardinalityKeyValue("outcome", "timed_out")
                .doesNotHaveHighCardinalityKeyValue("fencing.token", "0");

        CompletableFuture<Boolean> waiter = inNewThread("waiter", () -> {
            RelockLock lock = client.lock("busy");
            boolean got = lock.tryLock(HANG.toMillis(), TimeUnit.MILLISECONDS);
            lock.unlock();
            return got;
        });
        await().atMost(HANG).until(() -> gauge("relock.waiting", "exclusive", "all") == 1);
        held.unlock();
        assertThat(resultOf(waiter)).isTrue();
        assertThat(gauge("relock.waiting", "exclusive", "all")).isZero();
        assertThat(acquisitions("exclusive", "all", "acquired")).isEqualTo(1);
        assertThat(meters.find("relock.acquire").tags("outcome", "acquired").timer().totalTime(TimeUnit.NANOSECONDS))
                .as("wait time recorded").isPositive();
    }

    @Test
    void anAcquisitionThatFailsIsCountedAndTheNodeReportedDown() {
        try (RedisServer server = RedisServer.start();
                RelockClient client = RelockClient.builder()
                        .redisUri(server.uri())
                        .commandTimeout(Duration.ofMillis(500))
                        .meterRegistry(meters)
                        .observationRegistry(observations)
                        .build()) {
            String node = server.host() + ":" + server.port();
            assertThat(meters.get("relock.node.up").tags("node", node).gauge().value()).isEqualTo(1);
            server.kill();
            assertThatThrownBy(() -> client.lock("doomed").tryLock(1, TimeUnit.SECONDS))
                    .isInstanceOf(RedisUnavailableException.class);
            assertThat(acquisitions("exclusive", "all", "failed")).isEqualTo(1);
            TestObservationRegistryAssert.assertThat(observations)
                    .hasObservationWithNameEqualTo("relock.wait").that()
                    .hasBeenStopped()
                    .hasLowCardinalityKeyValue("outcome", "failed")
                    .hasError();
            await().atMost(HANG).until(() -> meters.get("relock.node.up").tags("node", node).gauge().value() == 0);
            assertThatThrownBy(client::ping)
                    .isInstanceOf(RedisUnavailableException.class)
                    .hasMessageContaining(node);
            client.close();
            assertThat(meters.find("relock.node.up").gauge()).as("removed with the last client of the node").isNull();
        }
    }

    @Test
    void aLeaseLostWhileHeldIsCountedAndEndsTheHold() {
        RelockClient client = newClient(builder -> builder
                .defaultLease(Duration.ofMillis(300))
                .meterRegistry(meters)
                .observationRegistry(observations));
        LockHandle held = client.lock("lost").acquire();
        await().atMost(HANG).until(() -> counter("relock.renewals", "outcome", "ok") >= 1);
        assertThat(counter("relock.leases.lost", "kind", "exclusive", "group", "all")).isZero();

        admin().del("relock:{lost}");
        await().atMost(HANG).until(() -> counter("relock.leases.lost", "kind", "exclusive", "group", "all") == 1);
        assertThat(counter("relock.renewals", "outcome", "failed")).isEqualTo(1);
        assertThat(holdTimes("exclusive", "all")).isEqualTo(1);
        assertThat(gauge("relock.locks.held", "exclusive", "all")).isZero();
        assertThat(client.heldLocks()).as("a lost hold is no longer listed").isEmpty();
        TestObservationRegistryAssert.assertThat(observations)
                .hasObservationWithNameEqualTo("relock.hold").that()
                .hasBeenStopped()
                .hasLowCardinalityKeyValue("outcome", "lost");

        assertThatThrownBy(held::close).isInstanceOf(LeaseLostException.class);
        assertThat(holdTimes("exclusive", "all")).as("recorded once, at the loss").isEqualTo(1);
    }

    @Test
    void everyKindIsTaggedWithItsGroupAndNoLockNameBecomesATag() throws Exception {
        RelockClient client = newClient(builder -> builder
                .meterRegistry(meters)
                .observationRegistry(observations)
                .metricsGroup(name -> name.substring(0, name.indexOf(':'))));
        RelockLock read = client.readWriteLock("report:1").readLock();
        read.lock();
        read.unlock();
        RelockSemaphore exports = client.semaphore("exports:a");
        exports.trySetPermits(2);
        try (PermitHandle permits = exports.acquire(1)) {
            assertThat(gauge("relock.locks.held", "semaphore", "exports")).isEqualTo(1);
        }
        try (MultiLockHandle both = client.multiLock("account:1", "account:2").acquire()) {
            assertThat(gauge("relock.locks.held", "exclusive", "account")).isEqualTo(2);
        }
        assertThat(acquisitions("shared", "report", "acquired")).isEqualTo(1);
        assertThat(acquisitions("semaphore", "exports", "acquired")).isEqualTo(1);
        assertThat(acquisitions("multi", "account", "acquired")).isEqualTo(1);
        assertThat(holdTimes("exclusive", "account")).isEqualTo(2);
        assertThat(holdTimes("shared", "report")).isEqualTo(1);
        assertThat(holdTimes("semaphore", "exports")).isEqualTo(1);

        List<String> tagValues = meters.getMeters().stream()
                .map(Meter::getId)
                .flatMap(id -> id.getTags().stream())
                .map(Tag::getValue)
                .toList();
        assertThat(tagValues).doesNotContain("report:1", "exports:a", "account:1", "account:2");
        TestObservationRegistryAssert.assertThat(observations)
                .hasAnObservation(observation -> observation
                        .hasNameEqualTo("relock.wait")
                        .hasLowCardinalityKeyValue("kind", "multi")
                        .hasHighCardinalityKeyValue("lock.name", "account:1,account:2"));
    }

    @Test
    void heldLocksListsTheClientsHoldsWithoutARoundTrip() throws Exception {
        RelockClient client = observedClient();
        Instant before = Instant.now().minusMillis(1);
        RelockLock exclusive = client.lock("held:x");
        exclusive.lock();
        assertThat(exclusive.tryLock(0, 5, TimeUnit.SECONDS)).as("re-entered").isTrue();
        RelockLock read = client.readWriteLock("held:r").readLock();
        assertThat(read.tryLock(0, 5, TimeUnit.SECONDS)).isTrue();
        client.semaphore("held:s").trySetPermits(1);
        PermitHandle permit = client.semaphore("held:s").acquire(1);

        long calls = scriptCalls();
        List<HeldLock> held = client.heldLocks();
        assertThat(scriptCalls()).as("no script ran for heldLocks()").isEqualTo(calls);

        assertThat(held).extracting(HeldLock::name).containsExactly("held:r", "held:s", "held:x");
        assertThat(held).extracting(HeldLock::kind)
                .containsExactly(LockKind.SHARED, LockKind.SEMAPHORE, LockKind.EXCLUSIVE);
        assertThat(held).extracting(HeldLock::renewed).containsExactly(false, true, true);
        assertThat(held).allSatisfy(lock -> {
            assertThat(ownedBy(lock.owner(), client)).isTrue();
            assertThat(lock.fencingToken()).isPositive();
            assertThat(lock.heldSince()).isBetween(before, Instant.now());
            assertThat(lock.remainingLease()).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(30));
        });
        assertThat(held.get(0).remainingLease()).isLessThanOrEqualTo(Duration.ofSeconds(5));
        assertThat(held.get(2).fencingToken()).isEqualTo(client.inspect("held:x").fencingToken());

        permit.close();
        read.unlock();
        exclusive.unlock();
        exclusive.unlock();
        assertThat(client.heldLocks()).isEmpty();
    }

    @Test
    void pingMeasuresARoundTripAndAClosedClientRefuses() {
        RelockClient client = newClient();
        long commands = Long.parseLong(admin().info("commandstats").lines()
                .filter(line -> line.startsWith("cmdstat_ping:")).findFirst()
                .map(line -> line.replaceAll("^cmdstat_ping:calls=(\\d+),.*", "$1")).orElse("0"));
        Duration roundTrip = client.ping();
        assertThat(roundTrip).isPositive().isLessThan(HANG);
        assertThat(admin().info("commandstats")).contains("cmdstat_ping:calls=" + (commands + 1) + ",");
        client.close();
        assertThatThrownBy(client::ping).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
    }

    @Test
    void registriesAndGroupsMustNotBeNull() {
        RelockClientBuilder builder = RelockClient.builder();
        assertThatThrownBy(() -> builder.meterRegistry(null))
                .isInstanceOf(NullPointerException.class).hasMessage("meterRegistry");
        assertThatThrownBy(() -> builder.observationRegistry(null))
                .isInstanceOf(NullPointerException.class).hasMessage("observationRegistry");
        assertThatThrownBy(() -> builder.metricsGroup(null))
                .isInstanceOf(NullPointerException.class).hasMessage("metricsGroup");
    }

    @Test
    void observationsAloneWorkAndAGlobalConventionOverridesRelocksOwn() {
        observations.observationConfig().observationConvention(
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
        RelockClient client = newClient(builder -> builder.observationRegistry(observations));
        RelockLock lock = client.lock("custom");
        lock.lock();
        lock.unlock();
        TestObservationRegistryAssert.assertThat(observations)
                .hasNumberOfObservationsWithNameEqualTo("custom.lock", 2)
                .hasAnObservation(observation -> observation.hasLowCardinalityKeyValue("state", "acquired"))
                .hasAnObservation(observation -> observation.hasLowCardinalityKeyValue("state", "released"));
        assertThat(meters.getMeters()).as("no meter registry given").isEmpty();
    }

    @Test
    void aGroupFunctionReturningNullMeansAll() {
        RelockClient client = newClient(builder -> builder.meterRegistry(meters).metricsGroup(name -> null));
        RelockLock lock = client.lock("ungrouped");
        lock.lock();
        lock.unlock();
        assertThat(acquisitions("exclusive", "all", "acquired")).isEqualTo(1);
        assertThat(Optional.ofNullable(meters.find("relock.node.up").gauge())).isPresent();
    }
}
