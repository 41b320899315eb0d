package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.relock.testredis.RedisServer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * What the single-server engine reports where the contract cannot look: the up gauge of the one
 * server when it dies, and that {@link RelockClient#heldLocks()} and {@link RelockClient#ping()} cost
 * no script and one PING on it (INFO commandstats). Meters, observations and {@code heldLocks()} as
 * every deployment reports them are {@code contract/ObservabilityContract}.
 */
@Tag("redis")
class ObservabilityTest extends OneServerTestBase {

    private SimpleMeterRegistry meters;
    private TestObservationRegistry observations;

    @BeforeEach
    void freshRegistries() {
        meters = new SimpleMeterRegistry();
        observations = TestObservationRegistry.create();
    }

    private long acquisitions(String kind, String group, String outcome) {
        var timer = meters.find("relock.acquire").tags("kind", kind, "group", group, "outcome", outcome).timer();
        return timer == null ? 0 : timer.count();
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
    void heldLocksRunsNoScript() throws Exception {
        RelockClient client = newClient();
        RelockLock exclusive = client.lock("held:x");
        exclusive.lock();
        RelockLock read = client.readWriteLock("held:r").readLock();
        assertThat(read.tryLock(0, 5, TimeUnit.SECONDS)).isTrue();
        client.semaphore("held:s").trySetPermits(1);
        PermitHandle permit = client.semaphore("held:s").acquire(1);

        long calls = scriptCalls();
        assertThat(client.heldLocks()).hasSize(3);
        assertThat(scriptCalls()).as("no script ran for heldLocks()").isEqualTo(calls);

        permit.close();
        read.unlock();
        exclusive.unlock();
    }

    @Test
    void pingIsOnePingCommand() {
        RelockClient client = newClient();
        long commands = Long.parseLong(admin().info("commandstats").lines()
                .filter(line -> line.startsWith("cmdstat_ping:")).findFirst()
                .map(line -> line.replaceAll("^cmdstat_ping:calls=(\\d+),.*", "$1")).orElse("0"));
        assertThat(client.ping()).isPositive();
        assertThat(admin().info("commandstats")).contains("cmdstat_ping:calls=" + (commands + 1) + ",");
    }
}
