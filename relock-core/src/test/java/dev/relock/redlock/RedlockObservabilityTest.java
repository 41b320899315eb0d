package dev.relock.redlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.relock.LockHandle;
import dev.relock.RelockClient;
import dev.relock.RelockLock;
import dev.relock.testredis.RedisServer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Meters and observations of a Redlock client over five servers, in a {@link SimpleMeterRegistry}:
 * acquisitions by outcome and kind, holds until release or loss, renewals, the waiting gauge and
 * one up gauge per server.
 */
class RedlockObservabilityTest extends RedlockTestBase {

    private SimpleMeterRegistry meters;
    private TestObservationRegistry observations;

    @Override
    int nodeCount() {
        return 5;
    }

    @BeforeEach
    void freshRegistries() {
        meters = new SimpleMeterRegistry();
        observations = TestObservationRegistry.create();
    }

    private long acquisitions(String kind, String outcome) {
        var timer = meters.find("relock.acquire").tags("kind", kind, "group", "all", "outcome", outcome).timer();
        return timer == null ? 0 : timer.count();
    }

    private double gauge(String name, String kind) {
        var gauge = meters.find(name).tags("kind", kind, "group", "all").gauge();
        return gauge == null ? Double.NaN : gauge.value();
    }

    private double counter(String name, String... tags) {
        var counter = meters.find(name).tags(tags).counter();
        return counter == null ? 0 : counter.count();
    }

    @Test
    void acquisitionsHoldsAndNodesAreMeasured() throws Exception {
        RelockClient client = newClient(b -> b.meterRegistry(meters).observationRegistry(observations));
        for (RedisServer node : nodes) {
            var up = meters.find("relock.node.up").tags("node", "127.0.0.1:" + node.port()).gauge();
            assertThat(up).as("up gauge of " + node.port()).isNotNull();
            assertThat(up.value()).isEqualTo(1);
        }
        try (LockHandle held = client.lock("metered").acquire()) {
            assertThat(gauge("relock.locks.held", "exclusive")).isEqualTo(1);
        }
        assertThat(acquisitions("exclusive", "acquired")).isEqualTo(1);
        assertThat(gauge("relock.locks.held", "exclusive")).isZero();
        var holdTime = meters.find("relock.hold.time").tags("kind", "exclusive", "group", "all").timer();
        assertThat(holdTime).isNotNull();
        assertThat(holdTime.count()).isEqualTo(1);

        try (LockHandle read = client.readWriteLock("metered").readLock().acquireAsync().toCompletableFuture()
                .get(HANG.toMillis(), TimeUnit.MILLISECONDS)) {
            assertThat(gauge("relock.locks.held", "shared")).isEqualTo(1);
        }
        assertThat(acquisitions("shared", "acquired")).isEqualTo(1);

        RelockLock other = newClient().lock("busy");
        other.lock();
        assertThat(client.lock("busy").tryLock(50, TimeUnit.MILLISECONDS)).isFalse();
        assertThat(acquisitions("exclusive", "timed_out")).isEqualTo(1);
        CompletableFuture<Boolean> waiter = inNewThread("waiter", () -> {
            RelockLock lock = client.lock("busy");
            boolean got = lock.tryLock(HANG.toMillis(), TimeUnit.MILLISECONDS);
            lock.unlock();
            return got;
        });
        await().atMost(HANG).until(() -> gauge("relock.waiting", "exclusive") == 1);
        other.unlock();
        assertThat(resultOf(waiter)).isTrue();
        assertThat(gauge("relock.waiting", "exclusive")).isZero();
        // a wait and a hold for each of the three acquisitions that got the lock, a wait for the one that did not
        TestObservationRegistryAssert.assertThat(observations).hasNumberOfObservationsEqualTo(7);

        nodes.get(0).kill();
        var down = meters.find("relock.node.up").tags("node", "127.0.0.1:" + nodes.get(0).port()).gauge();
        await().atMost(HANG).until(() -> down.value() == 0);
    }

    @Test
    void renewalsAndALostLeaseAreCounted() {
        RelockClient client = newClient(b -> b.meterRegistry(meters).defaultLease(Duration.ofMillis(600)));
        LockHandle held = client.lock("renewed").acquire();
        await().atMost(HANG).until(() -> counter("relock.renewals", "outcome", "ok") >= 2);
        // killed, not flushed one by one: a renewal between two flushes would give the key back
        for (int i = 0; i < 3; i++) {
            nodes.get(i).kill();
        }
        await().atMost(HANG).until(() -> counter("relock.leases.lost", "kind", "exclusive", "group", "all") == 1);
        assertThat(counter("relock.renewals", "outcome", "failed")).isGreaterThanOrEqualTo(1);
        assertThat(gauge("relock.locks.held", "exclusive")).isZero();
        assertThatThrownBy(held::close).isInstanceOf(dev.relock.LeaseLostException.class);
    }
}
