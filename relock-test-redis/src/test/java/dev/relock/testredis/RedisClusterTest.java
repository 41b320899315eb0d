package dev.relock.testredis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;

import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.stream.IntStream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("redis")
class RedisClusterTest {

    @AfterEach
    void everyServerWasClosed() {
        assertThat(ProcessRegistry.instance().openProcesses()).isEmpty();
    }

    @Test
    void slotMatchesClusterKeyslotIncludingHashTags() {
        // a lone cluster-enabled node answers CLUSTER KEYSLOT without any slot assigned
        try (RedisServer node = RedisServer.builder()
                .config("cluster-enabled", "yes").config("cluster-config-file", "nodes.conf").start()) {
            for (String key : new String[] {"", "a", "lock:orders", "{user1000}.following", "foo{}{bar}", "{}x",
                    "a{b", "x{a}{b}", "ünïcødé", "123456789"}) {
                assertThat(RedisCluster.slot(key)).as(key)
                        .isEqualTo(Integer.parseInt(node.execute("CLUSTER", "KEYSLOT", key)));
            }
        }
        assertThat(RedisCluster.slot("{user1000}.following")).isEqualTo(RedisCluster.slot("{user1000}.followers"));
        assertThatThrownBy(() -> RedisCluster.slot(null)).isInstanceOf(NullPointerException.class);
    }

    @Test
    void formsSpreadsKeysAndFailsOverBothWays() {
        long startedAt = System.nanoTime();
        try (RedisCluster cluster = RedisCluster.builder().masters(3).replicasPerMaster(1).start()) {
            System.out.printf("cluster (3 masters + 3 replicas) up in %d ms%n", millisSince(startedAt));
            assertThat(cluster.nodes()).hasSize(6);
            assertThat(cluster.masters()).containsExactlyElementsOf(cluster.nodes().subList(0, 3));
            assertThat(cluster.replicas()).containsExactlyElementsOf(cluster.nodes().subList(3, 6));
            assertThat(cluster.seedUri()).isEqualTo(cluster.nodes().get(0).uri());

            Set<RedisServer> owners = new HashSet<>();
            IntStream.range(0, 30).forEach(i -> owners.add(cluster.masterFor("key-" + i)));
            assertThat(owners).containsExactlyInAnyOrderElementsOf(cluster.masters());

            RedisClusterClient client = RedisClusterClient.create(
                    cluster.uris().stream().map(RedisURI::create).toList());
            try (StatefulRedisClusterConnection<String, String> connection = client.connect()) {
                connection.setTimeout(TestTimeouts.scaled(Duration.ofSeconds(5)));
                connection.sync().set("alpha", "1");
                RedisServer owner = cluster.masterFor("alpha");
                assertThat(owner.execute("GET", "alpha")).isEqualTo("1");

                RedisServer replica = cluster.replicaOf(owner);
                long failoverAt = System.nanoTime();
                assertThat(cluster.failover(replica)).isSameAs(replica);
                System.out.printf("CLUSTER FAILOVER settled in %d ms%n", millisSince(failoverAt));
                assertThat(cluster.masterFor("alpha")).isSameAs(replica);
                assertThat(replica.execute("GET", "alpha")).isEqualTo("1");
                assertThat(cluster.replicaOf(replica)).isSameAs(owner);

                long killAt = System.nanoTime();
                RedisServer promoted = cluster.killMaster(replica);
                System.out.printf("master killed, replica promoted in %d ms%n", millisSince(killAt));
                assertThat(promoted).isSameAs(owner);
                assertThat(cluster.masterFor("alpha")).isSameAs(owner);

                replica.restart();
                long rejoinAt = System.nanoTime();
                cluster.awaitHealthy();
                System.out.printf("killed master rejoined in %d ms%n", millisSince(rejoinAt));
                assertThat(cluster.replicaOf(owner)).isSameAs(replica);

                int slot = RedisCluster.slot("alpha");
                RedisServer target = cluster.masters().stream().filter(m -> m != owner).findFirst().orElseThrow();
                cluster.migrateSlot(slot, target);
                assertThat(cluster.masterFor("alpha")).isSameAs(target);
                assertThat(target.execute("GET", "alpha")).isEqualTo("1");
                assertThat(connection.sync().get("alpha")).isEqualTo("1"); // MOVED followed by the client

                int betaSlot = RedisCluster.slot("{beta}");
                RedisServer betaSource = cluster.masterForSlot(betaSlot);
                RedisServer betaTarget = cluster.masters().stream().filter(m -> m != betaSource).findFirst()
                        .orElseThrow();
                connection.sync().set("{beta}old", "on-source");
                cluster.beginSlotMigration(betaSlot, betaTarget);
                assertThatThrownBy(() -> betaSource.execute("GET", "{beta}absent"))
                        .isInstanceOf(RedisCommandExecutionException.class).hasMessageStartingWith("ASK " + betaSlot);
                assertThat(betaSource.execute("GET", "{beta}old")).isEqualTo("on-source");
                connection.sync().set("{beta}new", "via-ask");
                assertThat(betaTarget.execute("ASKING")).isEqualTo("OK"); // the next command may read the slot
                assertThat(betaTarget.execute("GET", "{beta}new")).isEqualTo("via-ask");
                cluster.finishSlotMigration(betaSlot, betaTarget);
                assertThat(cluster.masterForSlot(betaSlot)).isSameAs(betaTarget);
                assertThat(connection.sync().mget("{beta}old", "{beta}new"))
                        .extracting(kv -> kv.getValueOrElse(null)).containsExactly("on-source", "via-ask");
            } finally {
                client.shutdown();
            }
        }
    }

    @Test
    void badOptionsAreRefused() {
        assertThatThrownBy(() -> RedisCluster.builder().masters(0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("masters");
        assertThatThrownBy(() -> RedisCluster.builder().config("cluster-enabled", "no"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("set by the cluster");
    }

    private static long millisSince(long nanos) {
        return Duration.ofNanos(System.nanoTime() - nanos).toMillis();
    }
}
