package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * What a fencing token's value is, as docs/fencing.md states it: the Redis server's clock in microseconds since
 * the epoch when the name has no later token (about 1.8 × 10^15 in 2026: a 64-bit column, never a 32-bit one),
 * one more than the last otherwise.
 */
@Tag("redis")
class FencingTokenValueTest extends OneServerTestBase {

    @Test
    void aFreshNamesTokenIsTheServersClockInMicroseconds() {
        RelockLock lock = newClient().lock("account:42");
        long before = serverMicros();
        long token;
        try (LockHandle held = lock.acquire()) {
            token = held.fencingToken();
        }
        long after = serverMicros();

        assertThat(token).as("the server's clock in µs around the acquisition").isBetween(before, after);
        assertThat(token).as("more than a 32-bit column holds").isGreaterThan(Integer.MAX_VALUE);
        assertThat(token).as("exact as a double, so in JSON and JavaScript too").isLessThan(1L << 53);
    }

    @Test
    void theNextTokenIsTheClockOrOneMoreThanTheLastWhicheverIsGreater() {
        RelockLock lock = newClient().lock("account:42");
        long last = 0;
        for (int round = 0; round < 50; round++) {
            long before = serverMicros();
            try (LockHandle held = lock.acquire()) {
                long token = held.fencingToken();
                assertThat(token).as("round %d", round).isGreaterThan(last).isGreaterThanOrEqualTo(before);
                assertThat(token).as("round %d: no more than the clock now, or one past the last", round)
                        .isLessThanOrEqualTo(Math.max(serverMicros(), last + 1));
                last = token;
            }
        }
    }

    private long serverMicros() {
        List<String> time = admin().time();
        return Long.parseLong(time.get(0)) * 1_000_000 + Long.parseLong(time.get(1));
    }
}
