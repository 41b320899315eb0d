package dev.relock.testredis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;

import java.time.Duration;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("redis")
class TcpProxyTest {

    private static RedisServer redis;
    private static RedisClient client;

    @BeforeAll
    static void startServer() {
        redis = RedisServer.start();
        client = RedisClient.create();
        client.setOptions(ClientOptions.builder().autoReconnect(false).build());
    }

    @AfterAll
    static void stopServer() {
        client.shutdown();
        redis.close();
    }

    @AfterEach
    void flush() {
        redis.flushAll();
    }

    private static StatefulRedisConnection<String, String> connect(TcpProxy proxy, Duration timeout) {
        RedisURI uri = RedisURI.create(proxy.uri());
        uri.setTimeout(TestTimeouts.scaled(timeout));
        return client.connect(uri);
    }

    @Test
    void forwardsCommandsBothWays() {
        try (TcpProxy proxy = TcpProxy.to(redis);
             StatefulRedisConnection<String, String> connection = connect(proxy, Duration.ofSeconds(5))) {
            assertThat(proxy.uri()).isEqualTo("redis://127.0.0.1:" + proxy.port());
            assertThat(proxy.target()).isEqualTo("127.0.0.1:" + redis.port());
            assertThat(connection.sync().ping()).isEqualTo("PONG");
            String large = "v".repeat(200_000); // several chunks each way
            connection.sync().set("k", large);
            assertThat(connection.sync().get("k")).isEqualTo(large);
            assertThat(redis.execute("STRLEN", "k")).isEqualTo("200000");
            assertThat(proxy.connectionCount()).isEqualTo(1);
        }
    }

    @Test
    void replyLatencyLetsTheServerRunACommandBeforeTheClientHearsOfIt() {
        try (TcpProxy proxy = TcpProxy.to(redis);
             StatefulRedisConnection<String, String> connection = connect(proxy, Duration.ofMillis(300))) {
            proxy.replyLatency(Duration.ofMillis(600));
            assertThatThrownBy(() -> connection.sync().set("late", "1")).isInstanceOf(RedisCommandTimeoutException.class);
            assertThat(redis.execute("GET", "late")).as("run at once, answered late").isEqualTo("1");
        }
    }

    @Test
    void aLostReplyEndsTheConnectionAfterTheServerRanTheCommand() {
        try (TcpProxy proxy = TcpProxy.to(redis);
             StatefulRedisConnection<String, String> connection = connect(proxy, Duration.ofSeconds(5))) {
            assertThat(connection.sync().ping()).isEqualTo("PONG");
            proxy.loseNextReplyAndReset();
            assertThatThrownBy(() -> connection.sync().incr("counter")).isInstanceOf(RedisException.class);
            assertThat(redis.execute("GET", "counter")).as("run, its reply lost").isEqualTo("1");
            await().atMost(Duration.ofSeconds(5)).until(() -> proxy.connectionCount() == 0);
        }
    }

    @Test
    void aFaultOnOneConnectionLeavesTheOthersAlone() {
        try (TcpProxy proxy = TcpProxy.to(redis);
             StatefulRedisConnection<String, String> first = connect(proxy, Duration.ofMillis(300));
             StatefulRedisConnection<String, String> second = connect(proxy, Duration.ofMillis(300))) {
            assertThat(first.sync().ping()).isEqualTo("PONG");
            assertThat(second.sync().ping()).isEqualTo("PONG");
            assertThat(proxy.connections()).hasSize(2);
            TcpProxy.Connection slow = proxy.connections().get(0);

            slow.replyLatency(Duration.ofMillis(600));
            assertThatThrownBy(() -> first.sync().set("slow", "1")).isInstanceOf(RedisCommandTimeoutException.class);
            assertThat(second.sync().ping()).as("the other connection is on time").isEqualTo("PONG");
            assertThat(redis.execute("GET", "slow")).as("run at once, answered late").isEqualTo("1");

            slow.replyLatency(Duration.ZERO);
            slow.loseNextReplyAndReset();
            assertThatThrownBy(() -> first.sync().incr("counter")).isInstanceOf(RedisException.class);
            assertThat(redis.execute("GET", "counter")).as("run, its reply lost").isEqualTo("1");
            assertThat(second.sync().ping()).isEqualTo("PONG");
            await().atMost(Duration.ofSeconds(5)).until(() -> proxy.connectionCount() == 1);
            assertThat(proxy.connections()).doesNotContain(slow);

            TcpProxy.Connection other = proxy.connections().get(0);
            other.blackhole();
            assertThatThrownBy(() -> second.sync().set("held", "1")).isInstanceOf(RedisCommandTimeoutException.class);
            assertThat(redis.execute("EXISTS", "held")).as("held in this connection's partition").isEqualTo("0");
            other.heal();
            await().atMost(Duration.ofSeconds(5)).until(() -> "1".equals(redis.execute("GET", "held")));

            other.reset();
            await().atMost(Duration.ofSeconds(5)).until(() -> !second.isOpen());
        }
    }

    @Test
    void latencyDelaysEveryRoundTripByTwiceTheOneWayDelay() {
        try (TcpProxy proxy = TcpProxy.to(redis);
             StatefulRedisConnection<String, String> connection = connect(proxy, Duration.ofSeconds(5))) {
            proxy.latency(Duration.ofMillis(100));

            long start = System.nanoTime();
            connection.sync().ping();
            Duration roundTrip = Duration.ofNanos(System.nanoTime() - start);

            assertThat(roundTrip).isGreaterThanOrEqualTo(Duration.ofMillis(200));
            proxy.latency(Duration.ZERO);
            start = System.nanoTime();
            connection.sync().ping();
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofMillis(200));
        }
    }

    @Test
    void blackholeMakesCommandsTimeOutWithoutResetAndHealDeliversWhatWasHeld() {
        try (TcpProxy proxy = TcpProxy.to(redis);
             StatefulRedisConnection<String, String> connection = connect(proxy, Duration.ofMillis(300))) {
            assertThat(connection.sync().ping()).isEqualTo("PONG");

            proxy.blackhole();
            assertThatThrownBy(() -> connection.sync().set("held", "1")).isInstanceOf(RedisCommandTimeoutException.class);
            assertThat(connection.isOpen()).isTrue();
            assertThat(redis.execute("EXISTS", "held")).isEqualTo("0");

            proxy.heal();
            await().atMost(TestTimeouts.scaled(Duration.ofSeconds(5)))
                    .until(() -> "1".equals(redis.execute("GET", "held")));
            // the late reply to the timed-out SET is consumed by that command: the connection stays in step
            assertThat(connection.sync().get("held")).isEqualTo("1");
        }
    }

    /**
     * Closing the proxy cuts what a black hole held: a client cut off at the end of a test must not act after it
     * (closing once healed first, which delivered the held commands, and a lock waiter cut off under load took a
     * lock again after its test).
     */
    @Test
    void closeLosesWhatABlackholeHeld() {
        TcpProxy proxy = TcpProxy.to(redis);
        try (StatefulRedisConnection<String, String> connection = connect(proxy, Duration.ofMillis(300))) {
            assertThat(connection.sync().ping()).isEqualTo("PONG");
            int withTheProxys = clientCount();
            proxy.blackhole();
            assertThatThrownBy(() -> connection.sync().set("held", "1")).isInstanceOf(RedisCommandTimeoutException.class);

            proxy.close();
            // once the server has dropped the proxy's connection, nothing it held can arrive any more
            await().atMost(TestTimeouts.scaled(Duration.ofSeconds(5))).until(() -> clientCount() == withTheProxys - 1);
            assertThat(redis.execute("EXISTS", "held")).as("the held SET reached the server").isEqualTo("0");
        }
    }

    private static int clientCount() {
        return redis.execute("CLIENT", "LIST").split("\\r?\\n").length;
    }

    @Test
    void cutConnectionsResetsClientsAndNewConnectionsWork() {
        try (TcpProxy proxy = TcpProxy.to(redis);
             StatefulRedisConnection<String, String> connection = connect(proxy, Duration.ofSeconds(5))) {
            assertThat(connection.sync().ping()).isEqualTo("PONG");
            proxy.blackhole();

            proxy.cutConnections();
            proxy.heal();

            await().atMost(TestTimeouts.scaled(Duration.ofSeconds(5))).until(() -> !connection.isOpen());
            assertThatThrownBy(() -> connection.sync().ping()).isInstanceOf(RedisException.class);
            assertThat(proxy.connectionCount()).isZero();
            try (StatefulRedisConnection<String, String> again = connect(proxy, Duration.ofSeconds(5))) {
                assertThat(again.sync().ping()).isEqualTo("PONG");
            }
        }
    }

    @Test
    void rejectNewResetsNewConnectionsButKeepsCurrentOnes() {
        try (TcpProxy proxy = TcpProxy.to(redis);
             StatefulRedisConnection<String, String> current = connect(proxy, Duration.ofSeconds(5))) {
            proxy.rejectNew(true);

            assertThatThrownBy(() -> connect(proxy, Duration.ofSeconds(2))).isInstanceOf(RedisConnectionException.class);
            assertThat(current.sync().ping()).isEqualTo("PONG");

            proxy.rejectNew(false);
            try (StatefulRedisConnection<String, String> later = connect(proxy, Duration.ofSeconds(5))) {
                assertThat(later.sync().ping()).isEqualTo("PONG");
            }
        }
    }

    @Test
    void aDeadTargetResetsTheConnection() {
        try (RedisServer doomed = RedisServer.start(); TcpProxy proxy = TcpProxy.to(doomed)) {
            doomed.kill();
            assertThatThrownBy(() -> connect(proxy, Duration.ofSeconds(2))).isInstanceOf(RedisConnectionException.class);
        }
    }

    @Test
    void badArgumentsAreRefused() {
        assertThatThrownBy(() -> TcpProxy.start("127.0.0.1", 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("port");
        try (TcpProxy proxy = TcpProxy.to(redis)) {
            assertThatThrownBy(() -> proxy.latency(Duration.ofMillis(-1)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("latency");
        }
    }
}
