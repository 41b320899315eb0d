package dev.relock.testredis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;

import java.time.Duration;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("redis")
class RedisSentinelGroupTest {

    @AfterEach
    void everyServerWasClosed() {
        assertThat(ProcessRegistry.instance().openProcesses()).isEmpty();
    }

    @Test
    void failoverAndKillPromoteAReplicaThatAcceptsWrites() {
        long startedAt = System.nanoTime();
        try (RedisSentinelGroup group = RedisSentinelGroup.builder().replicas(2).start()) {
            System.out.printf("sentinel group (1+2 data, 3 sentinels) up in %d ms%n", millisSince(startedAt));
            RedisServer first = group.master();
            assertThat(first).isSameAs(group.dataNodes().get(0));
            assertThat(group.replicas()).hasSize(2).doesNotContain(first);
            assertThat(group.sentinelUri()).isEqualTo("redis-sentinel://127.0.0.1:" + group.sentinels().get(0).port()
                    + ",127.0.0.1:" + group.sentinels().get(1).port() + ",127.0.0.1:" + group.sentinels().get(2).port()
                    + "#relock");
            first.execute("SET", "k", "v");
            first.execute("WAIT", "2", "5000");

            long failoverAt = System.nanoTime();
            RedisServer second = group.failover();
            System.out.printf("SENTINEL FAILOVER settled in %d ms%n", millisSince(failoverAt));

            assertThat(second).isNotSameAs(first);
            assertThat(group.master()).isSameAs(second);
            assertThat(second.execute("GET", "k")).isEqualTo("v");
            assertThat(second.execute("SET", "after", "failover")).isEqualTo("OK");
            assertThat(first.execute("INFO", "replication")).contains("role:slave", "master_port:" + second.port());
            assertThat(viaLettuceSentinel(group)).isEqualTo("failover");

            long killAt = System.nanoTime();
            RedisServer third = group.killMaster();
            System.out.printf("master killed, replica promoted in %d ms%n", millisSince(killAt));

            assertThat(third).isNotSameAs(second);
            assertThat(second.isRunning()).isFalse();
            assertThat(third.execute("SET", "after", "kill")).isEqualTo("OK");

            second.restart(); // comes back as a master; the sentinels demote it
            long rejoinAt = System.nanoTime();
            group.awaitReplicasInSync();
            System.out.printf("restarted former master rejoined as replica in %d ms%n", millisSince(rejoinAt));
            assertThat(second.execute("INFO", "replication")).contains("role:slave");
        }
    }

    private static String viaLettuceSentinel(RedisSentinelGroup group) {
        RedisClient client = RedisClient.create();
        try {
            RedisURI uri = RedisURI.create(group.sentinelUri());
            uri.setTimeout(TestTimeouts.scaled(Duration.ofSeconds(5)));
            try (StatefulRedisConnection<String, String> connection = client.connect(uri)) {
                return connection.sync().get("after");
            }
        } finally {
            client.shutdown();
        }
    }

    @Test
    void badOptionsAreRefused() {
        assertThatThrownBy(() -> RedisSentinelGroup.builder().replicas(0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("replicas");
        assertThatThrownBy(() -> RedisSentinelGroup.builder().masterName("a b"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("master name");
        assertThatThrownBy(() -> RedisSentinelGroup.builder().downAfter(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("downAfter");
        assertThatThrownBy(() -> RedisSentinelGroup.builder().config("replicaof", "x 1"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("set by the group");
    }

    private static long millisSince(long nanos) {
        return Duration.ofNanos(System.nanoTime() - nanos).toMillis();
    }
}
