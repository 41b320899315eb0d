package dev.relock.redlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.relock.LockHandle;
import dev.relock.RelockClient;
import dev.relock.RelockException;
import dev.relock.testredis.RedisServer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Meters of a Redlock client over five servers, in a {@link SimpleMeterRegistry}, where they depend on
 * the servers: one up gauge per server, from the client's start even for a server it cannot reach, and renewals
 * and a lost lease when a majority dies. Meters and
 * observations as every deployment reports them are {@code contract/ObservabilityContract}.
 */
@Tag("redis")
class RedlockObservabilityTest extends RedlockTestBase {

    private SimpleMeterRegistry meters;

    @Override
    int nodeCount() {
        return 5;
    }

    @BeforeEach
    void freshRegistry() {
        meters = new SimpleMeterRegistry();
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
    void everyServerHasAnUpGaugeThatFallsWhenTheServerDies() {
        newClient(b -> b.meterRegistry(meters));
        for (RedisServer node : nodes) {
            var up = meters.find("relock.node.up").tags("node", "127.0.0.1:" + node.port()).gauge();
            assertThat(up).as("up gauge of " + node.port()).isNotNull();
            assertThat(up.value()).isEqualTo(1);
        }
        nodes.get(0).kill();
        var down = meters.find("relock.node.up").tags("node", "127.0.0.1:" + nodes.get(0).port()).gauge();
        await().atMost(HANG).until(() -> down.value() == 0);
    }

    private Gauge nodeUp(RedisServer node) {
        return meters.find("relock.node.up").tags("node", "127.0.0.1:" + node.port()).gauge();
    }

    @Test
    void aServerDownAtTheStartReadsZeroFromTheStartAndGoesWithTheClient() {
        nodes.get(0).stop();
        RelockClient client = newClient(b -> b.meterRegistry(meters));
        assertThat(nodeUp(nodes.get(0))).as("up gauge of the server never reached").isNotNull();
        assertThat(nodeUp(nodes.get(0)).value()).isZero();
        assertThat(nodeUp(nodes.get(1)).value()).isEqualTo(1);
        client.close();
        assertThat(nodes).allSatisfy(node -> assertThat(nodeUp(node)).as("removed at close").isNull());
    }

    @Test
    void aClientThatCannotReachAMajorityLeavesEveryServerReadingZero() {
        for (int i = 0; i < 3; i++) {
            nodes.get(i).stop();
        }
        assertThatThrownBy(() -> newClient(b -> b.meterRegistry(meters).commandTimeout(Duration.ofMillis(500))))
                .isInstanceOf(RelockException.class);
        assertThat(nodes).allSatisfy(node -> {
            assertThat(nodeUp(node)).as("up gauge of " + node.port()).isNotNull();
            assertThat(nodeUp(node).value()).isZero();
        });
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
