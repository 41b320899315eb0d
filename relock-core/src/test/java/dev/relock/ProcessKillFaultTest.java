package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;

import dev.relock.testredis.RedisServer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A holder that dies without releasing (kill -9 of its JVM) blocks a lock for no longer than its lease: the lease
 * keeper is gone with the process, the lease runs out in Redis, and the next holder gets a larger fencing token.
 */
class ProcessKillFaultTest {

    private static final String LOCK = "process-kill";
    private static final Duration CHILD_START = Duration.ofSeconds(30);
    private static final Duration TAKEOVER = Duration.ofSeconds(10);

    @TempDir
    Path tmp;

    @Test
    void lockOfAKilledProcessIsTakenOverAfterItsLeaseWithAGreaterToken() throws Exception {
        try (RedisServer server = RedisServer.start();
                RelockClient client = RelockClient.builder()
                        .redisUri(server.uri())
                        .commandTimeout(Duration.ofSeconds(1))
                        .build()) {
            Process child = startHolder(server.uri());
            try {
                long childToken = readAcquiredToken(child);
                RelockLock lock = client.lock(LOCK);

                assertThat(lock.tryLock()).as("lock held by the child JVM").isFalse();
                assertThat(lock.isLocked()).isTrue();
                assertThat(lock.fencingToken()).hasValue(childToken);

                child.destroyForcibly(); // SIGKILL: no release, no shutdown hook
                assertThat(child.waitFor(10, TimeUnit.SECONDS)).as("child JVM exited").isTrue();

                Optional<LockHandle> taken = lock.tryAcquire(TAKEOVER);
                assertThat(taken).as("lock taken over within %s after the holder was killed", TAKEOVER).isPresent();
                try (LockHandle handle = taken.get()) {
                    assertThat(handle.fencingToken()).isGreaterThan(childToken);
                    assertThat(handle.isValid()).isTrue();
                }
            } finally {
                child.destroyForcibly();
                child.waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    private Process startHolder(String uri) throws IOException {
        String java = ProcessHandle.current().info().command().orElseThrow();
        List<String> command = new ArrayList<>(List.of(java, "-cp", System.getProperty("java.class.path")));
        String tmpdir = System.getProperty("java.io.tmpdir");
        if (tmpdir != null) {
            command.add("-Djava.io.tmpdir=" + tmpdir);
        }
        command.addAll(List.of(LockHolderInChildJvm.class.getName(), uri, LOCK));
        return new ProcessBuilder(command)
                .redirectError(tmp.resolve("child-stderr.txt").toFile())
                .start();
    }

    private long readAcquiredToken(Process child) throws Exception {
        BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
        CompletableFuture<String> line = CompletableFuture.supplyAsync(() -> {
            try {
                String read;
                while ((read = out.readLine()) != null) {
                    if (read.startsWith("ACQUIRED ")) {
                        return read;
                    }
                }
                return null;
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        });
        String acquired;
        try {
            acquired = line.get(CHILD_START.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException | ExecutionException e) {
            throw new AssertionError("child JVM did not report the lock acquired; its stderr:\n" + childStderr(), e);
        }
        assertThat(acquired).as("child JVM output; its stderr:\n%s", childStderr()).isNotNull();
        return Long.parseLong(acquired.substring("ACQUIRED ".length()).trim());
    }

    private String childStderr() {
        try {
            return Files.readString(tmp.resolve("child-stderr.txt"));
        } catch (IOException e) {
            return "(unreadable: " + e + ")";
        }
    }
}
