package dev.relock.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Named.named;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import dev.relock.LeaseLostException;
import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.springframework.integration.support.locks.DistributedLock;

/**
 * What Spring Integration 7.x's {@link DistributedLock} adds to a {@code Lock}: a time-to-live per
 * acquisition. Only relock-spring-integration runs these (relock-spring-integration-6 leaves this
 * class out: 6.x has no {@code DistributedLock}); everything else is {@link RelockLockRegistryTest}'s,
 * which both lines run.
 */
@Tag("redis")
class DistributedLockTest extends TwoInstances {

    /** One of DistributedLock's two ways to take a lock with a time-to-live, without waiting. */
    interface TakeWithTimeToLive {
        boolean take(DistributedLock lock, Duration ttl) throws InterruptedException;
    }

    static Stream<Arguments> bothWays() {
        return Stream.of(
                arguments(named("lock(ttl)", (TakeWithTimeToLive) (lock, ttl) -> {
                    lock.lock(ttl);
                    return true;
                })),
                arguments(named("tryLock(0, ttl)", (TakeWithTimeToLive) (lock, ttl) -> lock.tryLock(Duration.ZERO, ttl))));
    }

    @ParameterizedTest
    @MethodSource("bothWays")
    void aLockWithATimeToLiveIsNotRenewedAndUnlockAfterItRanOutThrows(TakeWithTimeToLive way) throws Exception {
        DistributedLock lock = instanceA.obtain("job");
        assertThat(way.take(lock, Duration.ofMillis(300))).isTrue();

        long start = System.nanoTime();
        boolean otherGotIt = inOtherThread(() -> instanceB.obtain("job").tryLock(HANG.toMillis(), TimeUnit.MILLISECONDS));

        assertThat(otherGotIt).isTrue();
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isBetween(Duration.ofMillis(150), HANG);
        assertThatThrownBy(lock::unlock).isInstanceOf(ConcurrentModificationException.class)
                .hasMessageContaining("'app:job'")
                .hasCauseInstanceOf(LeaseLostException.class);
    }

    @Test
    void renewLockExtendsALockTakenWithATimeToLive() throws Exception {
        DistributedLock lock = instanceA.obtain("job");
        lock.lock(Duration.ofMillis(300));

        instanceA.renewLock("job", Duration.ofSeconds(20));

        assertThat(clientA.lock("app:job").remainingLease()).hasValueSatisfying(left ->
                assertThat(left).isGreaterThan(Duration.ofSeconds(10)));
        lock.unlock();
    }

    @Test
    void timesToLiveMustBeGiven() {
        DistributedLock lock = instanceA.obtain("job");

        assertThatThrownBy(() -> lock.lock(null))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("ttl");
        assertThatThrownBy(() -> lock.tryLock(null, Duration.ofSeconds(1)))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("waitTime");
        assertThatThrownBy(() -> lock.tryLock(Duration.ZERO, null))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("ttl");
        assertThat(clientA.lock("app:job").isLocked()).isFalse();
    }
}
