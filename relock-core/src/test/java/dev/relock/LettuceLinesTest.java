package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.relock.ReplicationGuard.OnShortfall;
import dev.relock.internal.engine.RedisConnections;
import dev.relock.testredis.RedisServer;
import io.lettuce.core.KeyValue;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * What is true of the Lettuce line this build runs on (CI runs the suite on 6.8 and on Boot 3.5's 6.6, the contract
 * suite on Boot 4.1's 7.5). Lettuce before 6.7 sends a command that was in flight when its connection dropped again
 * after the reconnect, even under {@code REJECT_COMMANDS}; the replication guard's WAIT must never be, so the guard
 * is refused there.
 */
@Tag("redis")
class LettuceLinesTest {

    /** relock's version rule, checked against what this Lettuce really does with a command in flight at a cut. */
    @Test
    void aCommandInFlightAtACutConnectionIsSentAgainExactlyWhereRelockSaysSo() throws Exception {
        try (RedisServer server = RedisServer.start()) {
            RedisClient lettuce = RedisClient.create(server.uri());
            lettuce.setOptions(RedisConnections.clientOptions(Duration.ofSeconds(10)));
            try (StatefulRedisConnection<String, String> connection = lettuce.connect()) {
                CompletableFuture<KeyValue<String, String>> blocked =
                        connection.async().blpop(8, "in-flight").toCompletableFuture();
                String[] id = new String[1];
                await().atMost(Duration.ofSeconds(10)).until(() -> {
                    id[0] = blockedIn(server, "blpop");
                    return id[0] != null;
                });
                server.execute("CLIENT", "KILL", "ID", id[0]);
                // sent again, it blocks on the new connection: the value pushed then reaches it
                await().atMost(Duration.ofSeconds(10)).until(() -> blocked.isDone() || blockedIn(server, "blpop") != null);
                server.execute("RPUSH", "in-flight", "pushed after the cut");
                boolean sentAgain;
                try {
                    sentAgain = blocked.get(10, TimeUnit.SECONDS).getValue().equals("pushed after the cut");
                } catch (ExecutionException e) {
                    sentAgain = false;
                }
                assertThat(sentAgain).as("Lettuce %s sent the command in flight again after the reconnect",
                        RedisConnections.lettuceVersion()).isEqualTo(RedisConnections.lettuceSendsInFlightCommandsAgain());
            } finally {
                lettuce.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            }
        }
    }

    @Test
    void theReplicationGuardIsRefusedWhereLettuceSendsInFlightCommandsAgain() {
        try (RedisServer server = RedisServer.start()) {
            RelockClientBuilder builder = RelockClient.builder().redisUri(server.uri())
                    .replicationGuard(new ReplicationGuard(1, Duration.ofMillis(100), OnShortfall.FAIL));
            if (RedisConnections.lettuceSendsInFlightCommandsAgain()) {
                assertThatThrownBy(builder::build).isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("replicationGuard(...) needs Lettuce 6.7 or newer")
                        .hasMessageContaining(RedisConnections.lettuceVersion());
            } else {
                try (RelockClient client = builder.build()) {
                    assertThat(client.settings().replicationGuard()).isNotNull();
                }
            }
        }
    }

    /**
     * Issue 39: Spring Boot 3.5 (Lettuce 6.6) logged a WARN about lost leases at every start, and at every connect
     * attempt while Redis was down. relock's own clients say at INFO, once per JVM, that this Lettuce sends
     * commands again, and only where it does; never at WARN.
     */
    @Test
    void relocksOwnClientsTellOfCommandsSentAgainAtInfoAtMostOnceAndOnlyWhereTheyAre() {
        String notice = "sends a command again after a reconnect";
        try (RedisServer server = RedisServer.start(); StderrCapture err = new StderrCapture()) {
            for (int i = 0; i < 3; i++) {
                RelockClient.builder().redisUri(server.uri()).build().close();
            }
            String told = err.text();
            int times = told.split(java.util.regex.Pattern.quote(notice), -1).length - 1;
            assertThat(told.lines().filter(line -> line.contains(notice)))
                    .allSatisfy(line -> assertThat(line).contains("INFO").doesNotContain("WARN"));
            if (RedisConnections.lettuceSendsInFlightCommandsAgain()) {
                // once per JVM: another test of this JVM may have been told first
                assertThat(times).as("times told in three builds").isLessThanOrEqualTo(1);
            } else {
                assertThat(times).as("told where Lettuce %s does not send commands again",
                        RedisConnections.lettuceVersion()).isZero();
            }
        }
    }

    private static String blockedIn(RedisServer server, String command) {
        for (String line : server.execute("CLIENT", "LIST").split("\\r?\\n")) {
            if (line.contains(" cmd=" + command + " ")) {
                return line.substring("id=".length(), line.indexOf(' '));
            }
        }
        return null;
    }
}
