package dev.relock.cli;

import static dev.relock.cli.demo.TableRows.number;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.relock.cli.demo.CliProcess;
import dev.relock.cli.demo.InProcess;
import dev.relock.cli.demo.RunKeys;
import dev.relock.cli.demo.TableRows;
import dev.relock.testredis.RedisBinary;
import dev.relock.testredis.RedisServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** {@code relock verify} as a process against fixture Redis servers: pass, fail, unreachable. */
@Tag("redis")
class VerifyCommandTest {

    private static final Duration RUN_TIMEOUT = Duration.ofSeconds(120);
    private static final String PASSWORD = "s3cret-Verify-pw";

    @Test
    void passesOnTheEmbeddedRedisWithAPasswordAndDeletesOnlyItsOwnKeys() {
        // the oldest Redis the CLI meets by default: the 6.2 binary of the embedded-redis artifact
        try (RedisServer redis = RedisServer.builder().binary(RedisBinary.embedded()).password(PASSWORD).start()) {
            redis.execute("SET", "someone:else", "untouched");
            CliProcess.Result result;
            long pid;
            try (CliProcess cli = CliProcess.start(Map.of(), "verify", "--redis", redis.uriWithPassword(),
                    "--clients", "2", "--duration", "2s")) {
                pid = cli.process().pid();
                result = cli.await(RUN_TIMEOUT);
            }

            assertThat(result.exitCode()).as("stderr:%n%s", result.stderr()).isZero();
            Map<String, List<String>> rows = TableRows.parse(result.stdout());
            assertThat(rows.get("lost updates")).as(result.stdout()).containsExactly("0");
            assertThat(rows.get("fencing-order violations")).containsExactly("0");
            assertThat(number(rows.get("acquisitions").get(0))).isPositive();
            assertThat(result.stdout()).contains("Redis: " + redis.uri() + "\n").contains("PASS: ");
            assertThat(result.stdout() + result.stderr()).doesNotContain(PASSWORD);
            assertThat(CliProcess.workersOf(pid)).as("worker JVMs left").isEmpty();
            assertThat(redis.execute("KEYS", "*")).as("keys left in Redis").isEqualTo("[someone:else]");
        }
    }

    @Test
    void failsWithExit1WhenRedisLosesTheLocksAndCountersMidRun() {
        try (RedisServer redis = RedisServer.start();
                CliProcess cli = CliProcess.start(Map.of(), "verify", "--redis", redis.uri(),
                        "--clients", "2", "--duration", "6s")) {
            // what a restart without persistence or a failover to a lagging replica does; three times, because a
            // holder between its GET and its SET when the keys go writes its counter back (seen once: every counter
            // that had a value was written back so, and no update was lost)
            for (int flush = 0; flush < 3; flush++) {
                // the locked phase has begun (or, after a flush, gone on) once a counter is above 0
                await().atMost(RUN_TIMEOUT).until(() -> RunKeys.countersTotal(redis) > 0);
                redis.flushAll();
            }

            CliProcess.Result result = cli.await(RUN_TIMEOUT);
            assertThat(result.exitCode()).as("stdout:%n%s%nstderr:%n%s", result.stdout(), result.stderr())
                    .isEqualTo(ExitCodes.CHECK_FAILED);
            assertThat(number(TableRows.parse(result.stdout()).get("lost updates").get(0))).isPositive();
            assertThat(result.stdout().lines().filter(line -> line.startsWith("FAIL: ")).toList()).hasSize(1);
            assertThat(redis.execute("DBSIZE")).as("keys left in Redis").isEqualTo("0");
        }
    }

    @Test
    void unreachableRedisExits69WithOneLine() throws IOException {
        int port;
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = socket.getLocalPort();
        }
        CliProcess.Result result = CliProcess.run(RUN_TIMEOUT, Map.of(),
                "verify", "--redis", "redis://user:pw-not-shown@127.0.0.1:" + port, "--duration", "1s");

        assertThat(result.exitCode()).isEqualTo(ExitCodes.UNAVAILABLE);
        assertThat(result.stderrLines()).singleElement().asString()
                .startsWith("relock: ").contains("127.0.0.1:" + port).doesNotContain("pw-not-shown");
        assertThat(result.stdout()).isEmpty();
    }

    @Test
    void usageErrorsExit64WithoutStackTrace() {
        DemoCommandTest.assertUsageError("--clients must be 1 to 64, was 0", "verify", "--clients", "0");
        DemoCommandTest.assertUsageError("--locks must be 1 to 1000, was 0", "verify", "--locks", "0");
        DemoCommandTest.assertUsageError("is not a Redis URI", "verify", "--redis", "nonsense");
        DemoCommandTest.assertUsageError("Unknown option: '--embedded'", "verify", "--embedded");
    }

    @Test
    void helpShowsExamples() {
        InProcess run = InProcess.run("verify", "--help");
        assertThat(run.exitCode()).isZero();
        assertThat(run.out()).contains("Examples:", "relock verify --redis", "--clients", "--duration");
    }
}
