package dev.relock.cli;

import static dev.relock.cli.demo.TableRows.number;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.relock.cli.demo.CliProcess;
import dev.relock.cli.demo.InProcess;
import dev.relock.cli.demo.RedisTarget;
import dev.relock.cli.demo.RunKeys;
import dev.relock.cli.demo.TableRows;
import dev.relock.testredis.RedisServer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code relock demo} end to end, as a process: worker JVMs, the table, the clean-up, and what
 * happens when the parent or a worker is killed. Every run uses a private or fixture Redis
 * ($RELOCK_REDIS, or none named: then the demo starts its own even if one answers at the default address).
 */
@Tag("redis")
class DemoCommandTest {

    private static final Duration RUN_TIMEOUT = Duration.ofSeconds(120);
    private static final Duration GONE = Duration.ofSeconds(20);
    private static final Pattern PRIVATE_PORT = Pattern.compile("^Redis: redis://127\\.0\\.0\\.1:(\\d+), a private");

    @Test
    void lockedRunLosesNothingAndTheSameRunWithoutTheLockLosesUpdates() {
        CliProcess.Result result;
        long pid;
        // no --redis, no $RELOCK_REDIS: a private server, whatever answers at 127.0.0.1:6379
        try (CliProcess cli = CliProcess.start(Map.of(), "demo", "--duration", "2s")) {
            pid = cli.process().pid();
            result = cli.await(RUN_TIMEOUT);
        }

        assertThat(result.exitCode()).as("exit code; stderr:%n%s", result.stderr()).isZero();
        Map<String, List<String>> rows = TableRows.parse(result.stdout());
        assertThat(rows).as(result.stdout()).containsKeys("acquisitions", "throughput", "acquire wait p50",
                "acquire wait p99", "acquire wait max", "handoff latency p50", "handoff latency p99",
                "fairness: min / max per worker", "lost updates", "fencing-order violations");
        assertThat(number(rows.get("acquisitions").get(0))).isPositive();
        assertThat(rows.get("lost updates").get(0)).as("lost updates with the lock").isEqualTo("0");
        assertThat(rows.get("fencing-order violations").get(0)).isEqualTo("0");
        // 8 threads in 4 JVMs doing thousands of unguarded GET-then-SET on 3 keys for 2 s: each thread
        // waits on the network between its GET and its SET, so another thread's SET lands in between
        // many times over; no scheduling on any machine serializes thousands of such round trips
        assertThat(number(rows.get("lost updates").get(1))).as("lost updates without the lock").isPositive();
        assertThat(result.stdout()).contains("private redis-server")
                .contains("started because neither --redis nor $RELOCK_REDIS names a Redis").contains("With the lock all");

        assertThat(CliProcess.workersOf(pid)).as("worker JVMs left").isEmpty();
        assertThat(RedisTarget.probe("127.0.0.1", privatePort(result.stdout()), Duration.ofSeconds(1)))
                .as("the private redis-server is stopped").isEqualTo(RedisTarget.Probe.NOTHING);
    }

    @Test
    void killedWorkerEndsTheRunWithOneLineAndTheRunsKeysAreDeleted() throws Exception {
        try (RedisServer redis = RedisServer.start();
                CliProcess cli = CliProcess.start(Map.of("RELOCK_REDIS", redis.uri()),
                        "demo", "--workers", "2", "--duration", "60s")) {
            redis.execute("SET", "someone:else", "untouched");
            String keys = cli.awaitStdoutLine(line -> line.startsWith("keys under "), RUN_TIMEOUT);
            List<ProcessHandle> workers = await().atMost(RUN_TIMEOUT).until(
                    () -> CliProcess.workersOf(cli.process().pid()), list -> list.size() == 2);

            workers.get(0).destroyForcibly();
            CliProcess.Result result = cli.await(RUN_TIMEOUT);

            assertThat(result.exitCode()).as("stderr: %s", result.stderr()).isEqualTo(ExitCodes.CHECK_FAILED);
            assertThat(result.stderrLines()).singleElement().asString()
                    .startsWith("relock: worker ").contains("was killed by signal 9");
            assertThat(CliProcess.workersOf(cli.process().pid())).as("worker JVMs left").isEmpty();
            assertThat(result.stdout()).contains("Redis: " + redis.uri() + " (from $RELOCK_REDIS)");
            assertThat(keys).contains("relock:demo-");
            assertThat(redis.execute("KEYS", "*")).as("keys left in Redis").isEqualTo("[someone:else]");
        }
    }

    @Test
    void workersAndThePrivateRedisDieWithAKilledParent() throws Exception {
        try (CliProcess cli = CliProcess.start(Map.of(), "demo", "--embedded", "--workers", "2", "--duration", "60s")) {
            String redisLine = cli.awaitStdoutLine(line -> line.startsWith("Redis: "), RUN_TIMEOUT);
            await().atMost(RUN_TIMEOUT).until(() -> CliProcess.workersOf(cli.process().pid()), list -> list.size() == 2);
            List<ProcessHandle> workers = CliProcess.workersOf(cli.process().pid());

            cli.process().destroyForcibly(); // SIGKILL: no shutdown hook runs in the parent

            await().atMost(GONE).until(() -> workers.stream().noneMatch(ProcessHandle::isAlive));
            await().atMost(GONE).until(() -> RedisTarget.probe("127.0.0.1", privatePort(redisLine),
                    Duration.ofSeconds(1)) == RedisTarget.Probe.NOTHING);
        }
    }

    @Test
    void sigtermEndsTheWorkersAndDeletesTheRunsKeys() throws Exception {
        try (RedisServer redis = RedisServer.start();
                CliProcess cli = CliProcess.start(Map.of(), "demo", "--redis", redis.uri(), "--workers", "2",
                        "--duration", "60s")) {
            // the locked phase has begun once a counter is above the 0 it was reset to
            await().atMost(RUN_TIMEOUT).until(() -> RunKeys.countersTotal(redis) > 0);
            List<ProcessHandle> workers = CliProcess.workersOf(cli.process().pid());
            assertThat(workers).hasSize(2);

            cli.process().destroy(); // SIGTERM, as from kill or a service manager; Ctrl-C runs the same hook
            CliProcess.Result result = cli.await(RUN_TIMEOUT);

            assertThat(result.exitCode()).isEqualTo(128 + 15);
            assertThat(workers).noneMatch(ProcessHandle::isAlive);
            assertThat(redis.execute("DBSIZE")).as("keys left in Redis").isEqualTo("0");
        }
    }

    @Test
    void usageErrorsExit64WithoutStackTrace() {
        assertUsageError("--embedded and --redis exclude each other", "demo", "--embedded", "--redis", "redis://x:1");
        assertUsageError("--workers must be 1 to 64, was 0", "demo", "--workers", "0");
        assertUsageError("'-5s' is not a duration", "demo", "--duration", "-5s");
        assertUsageError("--duration must be at least 100ms", "demo", "--duration", "0");
        assertUsageError("is not a Redis URI", "demo", "--redis", "http://example.com");
    }

    @Test
    void helpShowsExamples() {
        InProcess run = InProcess.run("demo", "--help");
        assertThat(run.exitCode()).isZero();
        assertThat(run.out()).contains("Examples:", "--workers", "--duration");
    }

    static void assertUsageError(String message, String... args) {
        InProcess run = InProcess.run(args);
        assertThat(run.exitCode()).as(run.err()).isEqualTo(ExitCodes.USAGE);
        assertThat(run.err()).startsWith("relock: ").contains(message).contains("Usage: relock")
                .doesNotContain("Exception", "\tat ");
        assertThat(run.out()).isEmpty();
    }

    private static int privatePort(String output) {
        Matcher matcher = PRIVATE_PORT.matcher(output.lines().filter(l -> l.startsWith("Redis: ")).findFirst()
                .orElseThrow());
        assertThat(matcher.find()).as(output).isTrue();
        return Integer.parseInt(matcher.group(1));
    }
}
