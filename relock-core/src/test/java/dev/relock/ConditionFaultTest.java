package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.relock.testredis.TcpProxy;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Conditions under the faults of one Redis: a waiter whose client died (its connections black-holed: nothing it
 * sends arrives, nothing sent to it arrives), and a signal published while the waiter's subscription was down.
 * The behaviour every topology shares is in contract/ConditionContract.
 */
class ConditionFaultTest extends OneServerTestBase {

    @Test
    void aSignalledWaiterWhoseClientDiedDoesNotKeepTheLockFromTheNext() throws Exception {
        try (TcpProxy proxy = TcpProxy.to(redis)) {
            RelockLock dying = newClient(builder -> builder.redisUri(proxy.uri())
                    .commandTimeout(Duration.ofSeconds(1))).lock("order");
            RelockLock living = newClient().lock("order");
            RelockLock signaller = newClient().lock("order");
            CompletableFuture<Object> first = inNewThread("dying", () -> {
                dying.lock();
                dying.newCondition().await();
                return "returned";
            });
            await().atMost(HANG).until(() -> signaller.newCondition().waiters().size() == 1);
            CompletableFuture<Boolean> second = inNewThread("living", () -> {
                living.lock();
                living.newCondition().await();
                boolean held = living.isHeldByCurrentThread();
                living.unlock();
                return held;
            });
            await().atMost(HANG).until(() -> signaller.newCondition().waiters().size() == 2);
            proxy.blackhole();
            signaller.lock();
            signaller.newCondition().signalAll();
            signaller.unlock();
            // the dead waiter is first in the lock's queue: it has the handoff grace to come, then the next gets it
            assertThat(resultOf(second)).isTrue();
            assertThat(first).isNotDone();
        }
    }

    @Test
    void aWaiterWhoseClientDiedLeavesTheWaitSetWhenItsLeaseEnds() throws Exception {
        try (TcpProxy proxy = TcpProxy.to(redis)) {
            RelockLock dying = newClient(builder -> builder.redisUri(proxy.uri()).defaultLease(Duration.ofSeconds(1))
                    .commandTimeout(Duration.ofSeconds(1))).lock("order");
            RelockLock signaller = newClient().lock("order");
            inNewThread("dying", () -> {
                dying.lock();
                dying.newCondition().await();
                return "returned";
            });
            await().atMost(HANG).until(() -> signaller.newCondition().waiters().size() == 1);
            proxy.blackhole();
            await().atMost(HANG).until(() -> signaller.newCondition().waiters().isEmpty());
            signaller.lock();
            signaller.newCondition().signal(); // nobody left to move into the lock's queue
            signaller.unlock();
            assertThat(admin().zrange("relock:{order}:queue", 0, -1)).isEmpty();
        }
    }

    @Test
    void aSignalPublishedWhileTheWaitersSubscriptionWasDownIsMadeUpForOnceItIsBack() throws Exception {
        try (TcpProxy proxy = TcpProxy.to(redis)) {
            // a 60 s lease: the waiter's own look every lease/3 comes too late for this test
            RelockLock waiting = newClient(builder -> builder.redisUri(proxy.uri()).defaultLease(Duration.ofSeconds(60)))
                    .lock("order");
            RelockLock signaller = newClient().lock("order");
            CompletableFuture<Boolean> waiter = inNewThread("waiter", () -> {
                waiting.lock();
                waiting.newCondition().await();
                boolean held = waiting.isHeldByCurrentThread();
                waiting.unlock();
                return held;
            });
            await().atMost(HANG).until(() -> signaller.newCondition().waiters().size() == 1);
            proxy.rejectNew(true);
            proxy.cutConnections();
            await().atMost(HANG).until(() -> proxy.connectionCount() == 0);
            signaller.lock();
            signaller.newCondition().signal(); // published to the waiter's channel while nobody listens on it
            signaller.unlock();
            proxy.rejectNew(false);
            assertThat(resultOf(waiter)).isTrue();
        }
    }

    @Test
    void waitsAreTimedByOutcome() throws Exception {
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        RelockLock lock = newClient(builder -> builder.meterRegistry(meters)).lock("order");
        lock.lock();
        assertThat(lock.newCondition().await(20, TimeUnit.MILLISECONDS)).isFalse();
        lock.unlock();
        assertThat(meters.get("relock.condition.wait").tag("outcome", "timeout").timer().count()).isEqualTo(1);
    }
}
