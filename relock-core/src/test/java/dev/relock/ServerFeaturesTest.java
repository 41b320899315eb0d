package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import dev.relock.internal.single.ServerFeatures;
import java.time.Duration;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The one-time probe of newer server commands agrees with the version of the redis-server it asked. */
@Tag("redis")
class ServerFeaturesTest extends OneServerTestBase {

    @Test
    void theProbeMatchesTheServersVersion() {
        String[] version = redis.binary().version().split("\\.");
        int major = Integer.parseInt(version[0]);
        int minor = Integer.parseInt(version[1]);
        ServerFeatures features = ServerFeatures.of(newClient(b -> b));
        assertThat(features.shardedPubSub()).as("SPUBLISH on %s", redis.binary().version()).isEqualTo(major >= 7);
        assertThat(features.waitAof()).as("WAITAOF on %s", redis.binary().version())
                .isEqualTo(major > 7 || (major == 7 && minor >= 2));
        assertThat(features.conditionalDelete()).as("DELEX on %s", redis.binary().version())
                .isEqualTo(major > 8 || (major == 8 && minor >= 4));
    }

    /**
     * The WAITAOF path itself needs Redis 7.2: the machine's redis-server (7.0) and the fixture's
     * embedded one (6.2) can only show that a server without it is refused at connect.
     */
    @Test
    void anFsyncedGuardIsRefusedAtConnectByAServerWithoutWaitAof() {
        assumeFalse(ServerFeatures.of(newClient(b -> b)).waitAof(),
                "this redis-server has WAITAOF");
        long connectedBefore = connectedClients();
        ReplicationGuard fsynced = new ReplicationGuard(1, Duration.ofMillis(100),
                ReplicationGuard.OnShortfall.RELEASE_AND_RETRY, true);

        assertThatThrownBy(() -> RelockClient.builder().redisUri(redis.uri()).replicationGuard(fsynced).build())
                .isInstanceOf(RelockException.class)
                .hasMessageContaining("needs WAITAOF (Redis 7.2 or later)")
                .hasMessageContaining("127.0.0.1:" + redis.port());
        // the refused client closed what it had opened
        await().atMost(HANG).until(() -> connectedClients() == connectedBefore);
        // a guard that does not ask for disks still connects
        RelockClient plain = newClient(b -> b.replicationGuard(new ReplicationGuard(1, Duration.ofMillis(100),
                ReplicationGuard.OnShortfall.RELEASE_AND_RETRY)));
        assertThat(plain.settings().replicationGuard().fsynced()).isFalse();
    }

    private long connectedClients() {
        for (String line : redis.execute("INFO", "clients").split("\r?\n")) {
            if (line.startsWith("connected_clients:")) {
                return Long.parseLong(line.substring("connected_clients:".length()).trim());
            }
        }
        throw new IllegalStateException("no connected_clients in INFO clients");
    }
}
