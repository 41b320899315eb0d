package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.relock.internal.metrics.CountedCall;
import dev.relock.testredis.RedisServer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Issue 39, "Metrics and operators": meters an operator can trust from the first second. The up gauge of a node
 * exists, reading 0, before the client ever connected (a build against a Redis that is down), so the Redis alerts can
 * fire for an application that started while Redis was down; and the tries of one {@link CountedCall} (the Spring
 * starter's {@code @DistributedLock} call, which tries again within its {@code waitFor}) count as one acquisition,
 * a miss of a skipping caller as {@code skipped}.
 */
@Tag("redis")
class MetersFromTheStartTest extends OneServerTestBase {

    private SimpleMeterRegistry meters;

    @BeforeEach
    void freshRegistry() {
        meters = new SimpleMeterRegistry();
    }

    private Gauge nodeUp(RedisServer server) {
        return meters.find("relock.node.up").tags("node", server.host() + ":" + server.port()).gauge();
    }

    private long acquisitions(String group, String outcome) {
        var timer = meters.find("relock.acquire").tags("kind", "exclusive", "group", group, "outcome", outcome).timer();
        return timer == null ? 0 : timer.count();
    }

    private RelockClientBuilder observed(RedisServer server) {
        return RelockClient.builder().redisUri(server.uri()).commandTimeout(Duration.ofMillis(500))
                .meterRegistry(meters).metricsGroup(name -> name);
    }

    /** Makes {@code tries} tries of {@code call} on {@code lock}, whose Redis is down: each throws. */
    private static void failTries(CountedCall call, RelockLock lock, int tries) {
        for (int i = 0; i < tries; i++) {
            assertThatThrownBy(() -> call.run(() -> lock.tryLock(100, TimeUnit.MILLISECONDS)))
                    .isInstanceOf(RedisUnavailableException.class);
        }
    }

    @Test
    void aNodeThatCannotBeReachedAtBuildReadsZeroUntilAClientConnects() {
        try (RedisServer late = RedisServer.start()) {
            late.stop();
            assertThatThrownBy(() -> observed(late).build()).isInstanceOf(RedisUnavailableException.class);
            assertThat(nodeUp(late)).as("registered before the first connection").isNotNull();
            assertThat(nodeUp(late).value()).isZero();
            assertThat(meters.find("relock.renewals").tags("outcome", "failed").counter())
                    .as("the renewal counters too").isNotNull();

            late.restart();
            RelockClient client = observed(late).build();
            assertThat(nodeUp(late).value()).isEqualTo(1);
            client.close();
            assertThat(nodeUp(late)).as("removed with the last client of the node").isNull();
        }
    }

    @Test
    void theTriesOfOneCallThatEndsWithTheLockCountOnceAsAcquired() throws Exception {
        try (RedisServer server = RedisServer.start(); RelockClient client = observed(server).build()) {
            RelockLock lock = client.lock("retried");
            CountedCall call = CountedCall.start(false);
            server.kill();
            failTries(call, lock, 2);
            assertThat(acquisitions("retried", "failed")).as("a failed try is held back: the call may try again")
                    .isZero();
            server.restart();
            await("the client reconnected").atMost(HANG).until(() -> nodeUp(server).value() == 1);
            assertThat(call.run(() -> lock.tryLock(HANG.toMillis(), TimeUnit.MILLISECONDS))).isTrue();
            call.end();
            lock.unlock();
            assertThat(acquisitions("retried", "acquired")).isEqualTo(1);
            assertThat(acquisitions("retried", "failed")).isZero();
        }
    }

    @Test
    void theTriesOfOneCallThatFailsCountOnceAsFailedWhenItEnds() {
        try (RedisServer server = RedisServer.start(); RelockClient client = observed(server).build()) {
            RelockLock lock = client.lock("outlasted");
            CountedCall call = CountedCall.start(false);
            server.kill();
            failTries(call, lock, 3);
            call.end();
            call.end();
            assertThat(acquisitions("outlasted", "failed")).isEqualTo(1);
            assertThatThrownBy(() -> lock.tryLock(100, TimeUnit.MILLISECONDS))
                    .isInstanceOf(RedisUnavailableException.class);
            assertThat(acquisitions("outlasted", "failed")).as("a try outside a call counts for itself").isEqualTo(2);
        }
    }

    @Test
    void aMissOfACallerThatSkipsCountsAsSkippedNotTimedOut() throws Exception {
        RelockClient client = newClient(builder -> builder.meterRegistry(meters).metricsGroup(name -> name));
        // a hold of a handle, not of this thread: the tries below miss the lock as another owner's would
        try (LockHandle held = client.lock("nightly").acquireAsync().toCompletableFuture()
                .get(HANG.toMillis(), TimeUnit.MILLISECONDS)) {
            RelockLock lock = client.lock("nightly");
            CountedCall skipping = CountedCall.start(true);
            assertThat(skipping.run(() -> lock.tryLock(0, TimeUnit.MILLISECONDS))).isFalse();
            skipping.end();
            assertThat(acquisitions("nightly", "skipped")).isEqualTo(1);
            assertThat(acquisitions("nightly", "timed_out")).isZero();

            CountedCall waiting = CountedCall.start(false);
            assertThat(waiting.run(() -> lock.tryAcquireAsync(Duration.ZERO)).toCompletableFuture()
                    .get(HANG.toMillis(), TimeUnit.MILLISECONDS)).isEmpty();
            waiting.end();
            assertThat(acquisitions("nightly", "timed_out")).isEqualTo(1);
            assertThat(acquisitions("nightly", "skipped")).isEqualTo(1);
        }
    }
}
