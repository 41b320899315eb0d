package dev.relock.shedlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.relock.RelockClient;
import dev.relock.testredis.RedisServer;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import net.javacrumbs.shedlock.core.LockConfiguration;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * With the default lease, a job's lock outlives {@code lockAtMostFor} only while its node lives:
 * a node killed with SIGKILL (a second JVM here) leaves its lock, which frees itself once the
 * client's default lease runs out, and another node then takes it.
 */
@Tag("redis")
class DeadNodeTest {

    private static final Duration HANG = Duration.ofSeconds(30);
    private static final Duration LEASE = Duration.ofMillis(1500);

    @Test
    void aKilledNodesLockFreesAfterTheDefaultLease() throws Exception {
        try (RedisServer redis = RedisServer.start();
                RelockClient client = RelockClient.builder().redisUri(redis.uri()).build()) {
            RelockLockProvider provider = new RelockLockProvider(client);
            Process node = new ProcessBuilder(
                    Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-cp", System.getProperty("java.class.path"),
                    JobHolderProcess.class.getName(), redis.uri(), "nightly", String.valueOf(LEASE.toMillis()))
                    .redirectError(ProcessBuilder.Redirect.DISCARD)
                    .start();
            try {
                BufferedReader out = new BufferedReader(
                        new InputStreamReader(node.getInputStream(), StandardCharsets.UTF_8));
                String firstLine = CompletableFuture.supplyAsync(() -> readLine(out))
                        .get(HANG.toMillis(), TimeUnit.MILLISECONDS);
                assertThat(firstLine).isEqualTo(JobHolderProcess.LOCKED);

                LockConfiguration job = new LockConfiguration(Instant.now(), "nightly", Duration.ofMinutes(1), Duration.ZERO);
                await().during(LEASE.multipliedBy(2)).atMost(HANG)
                        .until(() -> client.lock(provider.lockName("nightly")).isLocked());
                assertThat(provider.lock(job)).as("held by the live node").isEmpty();

                node.destroyForcibly();
                assertThat(node.waitFor(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
                long killed = System.nanoTime();

                await().atMost(HANG).until(() -> !client.lock(provider.lockName("nightly")).isLocked());
                assertThat(Duration.ofNanos(System.nanoTime() - killed)).isLessThanOrEqualTo(LEASE.plusSeconds(1));
                provider.lock(job).orElseThrow().unlock();
            } finally {
                node.destroyForcibly();
            }
        }
    }

    private static String readLine(BufferedReader reader) {
        try {
            return reader.readLine();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
