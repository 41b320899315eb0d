package dev.relock.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.relock.LockHandle;
import dev.relock.RedisUnavailableException;
import dev.relock.RelockLock;
import dev.relock.RelockMultiLock;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.LongFunction;
import org.junit.jupiter.api.Test;

/**
 * A multi-lock's wait is one deadline on the client's clock: each member lock is given what is left of it after the
 * ones before, and Redis found unavailable by the all-at-once script ends the wait only once the deadline has passed.
 * Member locks are stand-ins that take time by moving the clock.
 */
class OrderedMultiLockClockTest {

    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

    private final HandMovedClock clock = new HandMovedClock();
    // the waits the member locks were given, in nanoseconds, in the order they were asked
    private final List<Long> waits = new ArrayList<>();

    /** A member lock that takes {@code takesNanos} of the clock to acquire, and records the wait it was given. */
    private RelockLock member(String name, long takesNanos) {
        LockHandle handle = (LockHandle) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {LockHandle.class}, (proxy, method, args) -> switch (method.getName()) {
                    case "close" -> null;
                    case "name" -> name;
                    case "isValid" -> true;
                    default -> throw new UnsupportedOperationException(method.getName());
                });
        return (RelockLock) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {RelockLock.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "name", "toString" -> name;
                    case "tryLock" -> {
                        waits.add(((TimeUnit) args[1]).toNanos((Long) args[0]));
                        clock.advance(takesNanos);
                        yield true;
                    }
                    case "tryAcquire" -> {
                        waits.add(((Duration) args[0]).toNanos());
                        clock.advance(takesNanos);
                        yield Optional.of(handle);
                    }
                    case "unlock" -> null;
                    // what the multi-lock asks of each member it took, as its last was taken: still held
                    case "isHeldByCurrentThread" -> true;
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }

    private RelockMultiLock multiLock(LongFunction<List<Hold>> atOnce, RelockLock... locks) {
        return new OrderedMultiLock(List.of(locks), LockEvents.NONE, atOnce, hold -> {
            throw new AssertionError("no hold is taken at once here");
        }, clock);
    }

    @Test
    void eachMemberLockWaitsWhatIsLeftAfterTheOnesBefore() throws InterruptedException {
        RelockMultiLock multi = multiLock(lease -> null, member("a", 300 * MS), member("b", 250 * MS),
                member("c", 0));

        assertThat(multi.tryLock(1_000, TimeUnit.MILLISECONDS)).isTrue();
        assertThat(waits).containsExactly(1_000 * MS, 700 * MS, 450 * MS);

        waits.clear();
        assertThat(multi.tryAcquire(Duration.ofMillis(1_000))).isPresent();
        assertThat(waits).containsExactly(1_000 * MS, 700 * MS, 450 * MS);
    }

    @Test
    void redisUnavailableAtTheScriptGoesOnOneByOneUntilTheDeadline() throws InterruptedException {
        RelockMultiLock justInTime = multiLock(unavailableAfter(1_000 * MS - 1), member("a", 0));
        assertThat(justInTime.tryLock(1_000, TimeUnit.MILLISECONDS)).as("1 ns before the deadline").isTrue();
        assertThat(waits).as("the wait left for the lock taken one by one").containsExactly(1L);

        waits.clear();
        RelockMultiLock tooLate = multiLock(unavailableAfter(1_000 * MS), member("a", 0));
        assertThatThrownBy(() -> tooLate.tryLock(1_000, TimeUnit.MILLISECONDS)).as("at the deadline")
                .isInstanceOf(RedisUnavailableException.class);
        assertThat(waits).as("no lock tried after the deadline").isEmpty();
    }

    @Test
    void aSingleTryFailsWhenRedisIsUnavailableAtTheScript() {
        RelockMultiLock multi = multiLock(unavailableAfter(0), member("a", 0));

        assertThatThrownBy(multi::tryLock).isInstanceOf(RedisUnavailableException.class);
        assertThat(waits).isEmpty();
    }

    /** An all-at-once script that takes {@code takesNanos} of the clock, then finds Redis unavailable. */
    private LongFunction<List<Hold>> unavailableAfter(long takesNanos) {
        return lease -> {
            clock.advance(takesNanos);
            throw new RedisUnavailableException("made up: no reply in time", null);
        };
    }
}
