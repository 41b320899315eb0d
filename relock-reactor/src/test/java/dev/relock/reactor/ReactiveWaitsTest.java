package dev.relock.reactor;

import static org.assertj.core.api.Assertions.assertThat;

import dev.relock.LockHandle;
import dev.relock.RelockCondition;
import dev.relock.RelockCountDownLatch;
import dev.relock.RelockLock;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * {@link ReactiveLocks}' waits: a latch's and a condition's, as lazy Monos that no thread sits in, ended by a
 * cancelled subscription; and the signals of a handle's holder.
 */
@Tag("redis")
class ReactiveWaitsTest extends TwoClientsTestBase {

    @Test
    void aLatchWaitIsLazyOpensWhenTheCountReachesZeroAndEndsOnTimeout() {
        RelockCountDownLatch latch = client.countDownLatch("ready");
        latch.trySetCount(1);
        Mono<Boolean> opened = ReactiveLocks.await(latch, HANG.multipliedBy(3));
        assertThat(latch.inspect().waitingClients()).as("waiting before anybody subscribed").isEmpty();
        StepVerifier.create(opened)
                .then(() -> soon("the wait read the latch").until(() -> !latch.inspect().waitingClients().isEmpty()))
                .then(() -> other.countDownLatch("ready").countDown())
                .expectNext(true)
                .verifyComplete();
        latch.trySetCount(1);
        StepVerifier.create(ReactiveLocks.await(latch, Duration.ofMillis(100))).expectNext(false).verifyComplete();
        other.countDownLatch("ready").countDown();
    }

    @Test
    void aSignalReachesAConditionWaitInsideHoldingAndTheHandleHoldsTheLockAgain() {
        RelockLock lock = client.lock("order");
        RelockCondition paid = lock.newCondition("paid");
        Mono<Long> tokens = ReactiveLocks.holding(ReactiveLocks.acquire(lock), held -> {
            long before = held.fencingToken();
            return ReactiveLocks.await(paid, held, HANG.multipliedBy(3))
                    .map(signalled -> signalled && held.isValid() ? held.fencingToken() - before : -1L);
        });
        StepVerifier.create(tokens)
                .then(() -> soon("the await joined").until(() -> paid.waiters().size() == 1))
                .then(() -> {
                    LockHandle signaller = ReactiveLocks.acquire(other.lock("order")).block(HANG);
                    ReactiveLocks.signal(other.lock("order").newCondition("paid"), signaller).block(HANG);
                    ReactiveLocks.release(signaller).block(HANG);
                })
                .assertNext(greater -> assertThat(greater).as("how much the token grew").isPositive())
                .verifyComplete();
        assertThat(other.inspect("order").isHeld()).as("released after the body").isFalse();
    }

    @Test
    void aConditionWaitWhoseTimeRunsOutIsFalseWithTheLockHeldAgain() {
        RelockLock lock = client.lock("order");
        StepVerifier.create(ReactiveLocks.holding(ReactiveLocks.acquire(lock), held ->
                        ReactiveLocks.await(lock.newCondition(), held, Duration.ofMillis(100))
                                .map(signalled -> !signalled && held.isValid()
                                        && other.inspect("order").isHeld())))
                .expectNext(true)
                .verifyComplete();
    }

    /**
     * A subscription cancelled after a signal picked its await: the signal goes on to the next waiter (a thread of the
     * other client), which would otherwise wait out its minute.
     */
    @Test
    void aCancelledConditionWaitPassesTheSignalItTookOn() throws Exception {
        RelockLock lock = client.lock("queue");
        RelockCondition notEmpty = lock.newCondition();
        Disposable first = ReactiveLocks.holding(ReactiveLocks.acquire(lock),
                held -> ReactiveLocks.await(notEmpty, held, Duration.ofSeconds(60))).subscribe();
        soon("the first joined").until(() -> notEmpty.waiters().size() == 1);
        RelockLock secondLock = other.lock("queue");
        CompletableFuture<Boolean> second = CompletableFuture.supplyAsync(() -> {
            secondLock.lock();
            try {
                return secondLock.newCondition().await(60, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            } finally {
                secondLock.unlock();
            }
        });
        soon("the second joined").until(() -> notEmpty.waiters().size() == 2);
        LockHandle signaller = ReactiveLocks.acquire(other.lock("queue")).block(HANG);
        ReactiveLocks.signal(other.lock("queue").newCondition(), signaller).block(HANG);
        first.dispose();
        ReactiveLocks.release(signaller).block(HANG);
        assertThat(second.get(HANG.toSeconds(), TimeUnit.SECONDS)).as("the second was signalled").isTrue();
    }
}
