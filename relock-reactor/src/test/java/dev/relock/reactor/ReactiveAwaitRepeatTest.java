package dev.relock.reactor;

import dev.relock.RelockCondition;
import dev.relock.RelockLock;
import java.time.Duration;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * Review finding (issue 39): {@code ReactiveLocks.await(condition, held, timeout)}, whose javadoc says to await in a
 * loop ({@code repeat}), resubscribes inside the first await's completion; relock-core refused that ("awaits a
 * condition already") until a handle whose await's stage completed became usable at once.
 */
@Tag("redis")
class ReactiveAwaitRepeatTest extends TwoClientsTestBase {

    @Test
    void aConditionWaitRepeatedOnTheSameHandleAwaitsAgain() {
        RelockLock lock = client.lock("order");
        RelockCondition paid = lock.newCondition("paid");
        Mono<Long> timeouts = ReactiveLocks.holding(ReactiveLocks.acquire(lock), held ->
                ReactiveLocks.await(paid, held, Duration.ofMillis(100)).repeat(2).filter(signalled -> !signalled)
                        .count());
        StepVerifier.create(timeouts).expectNext(3L).expectComplete().verify(HANG);
    }
}
