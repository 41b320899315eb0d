package dev.relock.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.awaitility.Awaitility.await;

import dev.relock.testredis.RedisServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code relock exec} through the real launcher, against a fixture redis-server: mutual exclusion
 * across processes, exit codes, waiting, renewal, takeover after a crash, signals, lease loss.
 *
 * <p>Timing: JVM start-up on a loaded machine can take seconds, so every bound here is generous;
 * what a test waits for is a file a child writes, never a pause.
 */
@Tag("redis")
class ExecCommandTest {

    private static final Duration LONG = Duration.ofSeconds(60);
    private static RedisServer redis;

    @TempDir
    Path dir;

    @BeforeAll
    static void startRedisAndBuild() {
        Launcher.ensureBuilt();
        redis = RedisServer.start();
    }

    @AfterAll
    static void stopRedis() {
        redis.close();
    }

    @BeforeEach
    void emptyRedis() {
        redis.flushAll();
    }

    @Test
    void concurrentExecsNeverLoseAnUpdateAndTokensRiseInOrder() throws Exception {
        Path counter = Files.writeString(dir.resolve("counter"), "0\n");
        Path tokens = Files.createFile(dir.resolve("tokens"));
        // read, pause, write: without the lock two runs would read the same value
        String script = "n=$(cat " + counter + "); sleep 0.05; echo $((n + 1)) > " + counter + ";"
                + " echo \"$RELOCK_FENCING_TOKEN $RELOCK_LOCK_NAME\" >> " + tokens;
        int processes = 4;
        int runsEach = 5;
        ExecutorService pool = Executors.newFixedThreadPool(processes);
        try {
            List<Future<List<Launcher.Result>>> loops = new ArrayList<>();
            for (int p = 0; p < processes; p++) {
                loops.add(pool.submit(() -> {
                    List<Launcher.Result> results = new ArrayList<>();
                    for (int run = 0; run < runsEach; run++) {
                        results.add(exec(List.of("counter"), "sh", "-c", script));
                    }
                    return results;
                }));
            }
            for (Future<List<Launcher.Result>> loop : loops) {
                for (Launcher.Result result : loop.get()) {
                    assertThat(result.exitCode()).as(result.describe()).isZero();
                }
            }
        } finally {
            pool.shutdownNow();
        }

        assertThat(Files.readString(counter).trim()).isEqualTo(Integer.toString(processes * runsEach));
        List<String> lines = Files.readAllLines(tokens);
        assertThat(lines).hasSize(processes * runsEach).allMatch(line -> line.endsWith(" counter"));
        List<Long> values = lines.stream().map(line -> Long.parseLong(line.split(" ")[0])).toList();
        for (int i = 1; i < values.size(); i++) {
            assertThat(values.get(i)).as("token %d of %s", i, values).isGreaterThan(values.get(i - 1));
        }
    }

    @Test
    void exitsWithTheCommandsStatus() {
        assertThat(exec(List.of("status"), "sh", "-c", "exit 7").exitCode()).isEqualTo(7);
        assertThat(exec(List.of("status"), "true").exitCode()).isZero();
        // a signal ends the command: 128 + the signal, as shells report it
        assertThat(exec(List.of("status"), "sh", "-c", "kill -9 $$").exitCode()).isEqualTo(128 + 9);
    }

    @Test
    void commandNotFoundOrNotExecutableExits127Or126AndReleasesTheLock() throws IOException {
        Launcher.Result missing = exec(List.of("missing"), "/no/such/command", "arg");
        assertThat(missing.exitCode()).as(missing.describe()).isEqualTo(127);
        assertThat(missing.stderrLines()).singleElement().asString().contains("/no/such/command").contains("not found");

        Path notExecutable = Files.writeString(dir.resolve("script"), "#!/bin/sh\necho hi\n");
        Files.setPosixFilePermissions(notExecutable, PosixFilePermissions.fromString("rw-r--r--"));
        Launcher.Result denied = exec(List.of("missing"), notExecutable.toString());
        assertThat(denied.exitCode()).as(denied.describe()).isEqualTo(126);
        assertThat(denied.stderrLines()).singleElement().asString().contains("not executable");

        assertThat(exec(List.of("--wait", "0", "missing"), "true").exitCode()).as("the lock was released").isZero();
    }

    @Test
    void lockHeldElsewhereExits75WithoutRunningTheCommand() {
        Path ran = dir.resolve("ran");
        try (Holder holder = Holder.start(redis.uri(), dir, "busy")) {
            Launcher.Result once = exec(List.of("--wait", "0", "busy"), "touch", ran.toString());
            assertThat(once.exitCode()).as(once.describe()).isEqualTo(ExitCodes.NOT_ACQUIRED);
            // the message names the holder's process, from its identity record
            assertThat(once.stderrLines()).singleElement().asString().contains("'busy'").contains("not acquired")
                    .containsPattern("held by [0-9a-f]{32}:\\d+ \\(relock-cli on \\S+ \\(pid \\d+\\)");

            Launcher.Result waited = exec(List.of("--wait", "300ms", "busy"), "touch", ran.toString());
            assertThat(waited.exitCode()).as(waited.describe()).isEqualTo(ExitCodes.NOT_ACQUIRED);
            assertThat(waited.stderrLines()).singleElement().asString().contains("within 300ms");
            assertThat(waited.elapsed()).isGreaterThanOrEqualTo(Duration.ofMillis(300));

            assertThat(holder.release().exitCode()).isZero();
        }
        assertThat(ran).doesNotExist();
    }

    @Test
    void sharedRunsOverlapAndExcludeExclusiveOnes() {
        Path firstIn = dir.resolve("first-in");
        Path go = dir.resolve("go");
        Path ran = dir.resolve("ran");
        // the first reader stays until the test says go
        try (Launcher.Running reader = startExec(List.of("--shared", "catalog"), "sh", "-c",
                "touch " + firstIn + "; while [ ! -e " + go + " ]; do sleep 0.05; done")) {
            await().atMost(LONG).until(() -> Files.exists(firstIn));

            Launcher.Result second = exec(List.of("--wait", "0", "-s", "catalog"), "touch", ran.toString());
            assertThat(second.exitCode()).as("a second reader while the first holds: " + second.describe()).isZero();
            assertThat(ran).exists();

            Launcher.Result writer = exec(List.of("--wait", "0", "--exclusive", "catalog"), "true");
            assertThat(writer.exitCode()).as(writer.describe()).isEqualTo(ExitCodes.NOT_ACQUIRED);
            Launcher.Result plain = exec(List.of("--wait", "0", "catalog"), "true");
            assertThat(plain.exitCode()).as("plain exec is the exclusive half: " + plain.describe())
                    .isEqualTo(ExitCodes.NOT_ACQUIRED);

            touch(go);
            assertThat(reader.await().exitCode()).isZero();
        }
        Launcher.Result after = exec(List.of("--wait", "0", "-x", "catalog"), "true");
        assertThat(after.exitCode()).as(after.describe()).isZero();
        Launcher.Result both = exec(List.of("--shared", "--exclusive", "catalog"), "true");
        assertThat(both.exitCode()).as(both.describe()).isEqualTo(ExitCodes.USAGE);
    }

    @Test
    void shortLeaseIsRenewedThroughALongerCommand() {
        Path started = dir.resolve("started");
        Path later = dir.resolve("later");
        Path go = dir.resolve("go");
        // the command outlives its 1 s lease twice over before the test looks, then waits to be told to end
        try (Launcher.Running holder = startExec(List.of("--lease", "1s", "renewed"), "sh", "-c",
                "touch " + started + "; sleep 2; touch " + later + "; while [ ! -e " + go + " ]; do sleep 0.05; done")) {
            await().atMost(LONG).until(() -> Files.exists(later));

            Launcher.Result meanwhile = exec(List.of("--wait", "0", "renewed"), "true");
            assertThat(meanwhile.exitCode()).as(meanwhile.describe()).isEqualTo(ExitCodes.NOT_ACQUIRED);

            touch(go);
            Launcher.Result result = holder.await();
            assertThat(result.exitCode()).as(result.describe()).isZero();
            assertThat(result.stderr()).isEmpty();
        }
    }

    @Test
    void anotherExecTakesOverAfterTheHoldersProcessGroupIsKilled() throws Exception {
        Path started = dir.resolve("started");
        Path token = dir.resolve("token");
        Duration lease = Duration.ofSeconds(2);
        // setsid: relock and its child in a process group of their own, as a crashed host's would be
        try (Launcher.Running holder = Launcher.start(List.of("setsid"), Map.of(), "exec", "--redis", redis.uri(),
                "--lease", "2s", "crashed", "--", "sh", "-c",
                "echo $RELOCK_FENCING_TOKEN > " + token + "; touch " + started + "; exec sleep 60")) {
            await().atMost(LONG).until(() -> Files.exists(started));
            long firstToken = Long.parseLong(Files.readString(token).trim());

            long group = holder.process().pid();
            Process kill = new ProcessBuilder("kill", "-9", "--", "-" + group).inheritIO().start();
            assertThat(kill.waitFor()).isZero();
            long killedAt = System.nanoTime();
            holder.process().waitFor();

            Launcher.Result next = exec(List.of("--wait", "60s", "crashed"), "sh", "-c",
                    "echo $RELOCK_FENCING_TOKEN > " + token);
            Duration takeover = Duration.ofNanos(System.nanoTime() - killedAt);

            assertThat(next.exitCode()).as(next.describe()).isZero();
            assertThat(Long.parseLong(Files.readString(token).trim())).isGreaterThan(firstToken);
            // the lease, plus a JVM start on a busy machine
            assertThat(takeover).isLessThan(lease.plusSeconds(20));
        }
    }

    @ParameterizedTest(name = "SIG{0}")
    @ValueSource(strings = {"TERM", "INT"})
    void signalIsForwardedToTheCommandAndTheLockReleasedAfterIt(String signal) throws Exception {
        // a process started in the background by a shell without job control ignores SIGINT, and so do the JVMs
        // and shells it starts: then neither relock nor a trap in COMMAND can see it (POSIX), whatever relock does
        assumeFalse(signal.equals("INT") && sigintIgnoredHere(),
                "SIGINT is ignored by this build's processes (started in the background without job control)");
        Path started = dir.resolve("started");
        Path marker = dir.resolve("marker");
        // the child traps the signal, notes it, ends its own sleep and exits 3
        String script = "trap 'echo " + signal + " > " + marker + "; kill $pid; exit 3' " + signal + ";"
                + " sleep 60 & pid=$!; touch " + started + "; wait $pid";
        try (Launcher.Running running = startExec(List.of("signalled"), "sh", "-c", script)) {
            await().atMost(LONG).until(() -> Files.exists(started));

            // to relock itself: the launcher exec'ed the JVM, so this is relock's pid
            Process kill = new ProcessBuilder("kill", "-s", signal, Long.toString(running.process().pid()))
                    .inheritIO().start();
            assertThat(kill.waitFor()).isZero();
            Launcher.Result result = running.await();

            assertThat(result.exitCode()).as(result.describe()).isEqualTo(3);
            assertThat(Files.readString(marker).trim()).isEqualTo(signal);
        }
        Launcher.Result inspect = Launcher.run("inspect", "--redis", redis.uri(), "--json", "signalled");
        assertThat(inspect.stdout()).contains("\"held\":false");
    }

    @Test
    void sigtermWhileWaitingExits143WithoutRunningTheCommandAndLeavesTheQueue() throws Exception {
        Path ran = dir.resolve("ran");
        try (Holder holder = Holder.start(redis.uri(), dir, "queued");
                Launcher.Running waiting = startExec(List.of("queued"), "touch", ran.toString())) {
            await().atMost(LONG).pollInterval(Duration.ofMillis(200))
                    .until(() -> Launcher.run("inspect", "--redis", redis.uri(), "queued").stdout()
                            .contains("waiters: 1"));

            waiting.process().destroy();
            Launcher.Result result = waiting.await();

            assertThat(result.exitCode()).as(result.describe()).isEqualTo(128 + 15);
            assertThat(result.stderrLines()).singleElement().asString().contains("SIGTERM").contains("not run");
            assertThat(Launcher.run("inspect", "--redis", redis.uri(), "queued").stdout()).contains("waiters: 0");
            assertThat(holder.release().exitCode()).isZero();
        }
        assertThat(ran).doesNotExist();
    }

    @Test
    void losingTheLeaseEndsTheCommandAndExits70() {
        Path started = dir.resolve("started");
        try (Launcher.Running running = startExec(List.of("--lease", "1s", "flushed"), "sh", "-c",
                "touch " + started + "; exec sleep 30")) {
            await().atMost(LONG).until(() -> Files.exists(started));

            redis.flushAll();
            long flushed = System.nanoTime();
            Launcher.Result result = running.await(Duration.ofSeconds(25));

            assertThat(result.exitCode()).as(result.describe()).isEqualTo(ExitCodes.LEASE_LOST);
            assertThat(result.stderr()).contains("lease of lock 'flushed'").contains("lost");
            // noticed at the next renewal (lease/3), then SIGTERM ends sleep at once
            assertThat(Duration.ofNanos(System.nanoTime() - flushed)).as("sleep 30 was stopped")
                    .isLessThan(Duration.ofSeconds(20));
        }
    }

    @Test
    void onLostWarnOnlyWarnsAndExitsWithTheCommandsStatus() {
        Path started = dir.resolve("started");
        Path go = dir.resolve("go");
        try (Launcher.Running running = startExec(List.of("--lease", "1s", "--on-lost=warn", "warned"), "sh", "-c",
                "touch " + started + "; while [ ! -e " + go + " ]; do sleep 0.05; done; exit 5")) {
            await().atMost(LONG).until(() -> Files.exists(started));

            redis.flushAll();
            await().atMost(LONG).until(() -> running.stderrSoFar().contains("warning"));
            assertThat(running.process().isAlive()).as("the command goes on").isTrue();
            touch(go);
            Launcher.Result result = running.await();

            assertThat(result.exitCode()).as(result.describe()).isEqualTo(5);
            assertThat(result.stderrLines()).singleElement().asString()
                    .startsWith("relock: warning: lease of lock 'warned'");
        }
    }

    private static Launcher.Result exec(List<String> options, String... command) {
        return startExec(options, command).await();
    }

    private static Launcher.Running startExec(List<String> options, String... command) {
        List<String> args = new ArrayList<>(List.of("exec", "--redis", redis.uri()));
        args.addAll(options);
        args.add("--");
        args.addAll(List.of(command));
        return Launcher.start(args.toArray(String[]::new));
    }

    private static void touch(Path file) {
        try {
            Files.createFile(file);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** Whether this JVM ignores SIGINT (bit 1 of SigIgn in /proc/self/status), as its children then do too. */
    private static boolean sigintIgnoredHere() throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("SigIgn:")) {
                return (Long.parseUnsignedLong(line.substring("SigIgn:".length()).trim(), 16) & (1L << 1)) != 0;
            }
        }
        return false;
    }
}
