package dev.relock.internal.redlock;

import static org.assertj.core.api.Assertions.assertThat;

import dev.relock.LockInfo;
import dev.relock.LockKind;
import dev.relock.internal.engine.InspectReply;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What a majority of three nodes hold for a lock, from their inspect.lua replies, without Redis. */
class MajorityLockInfoTest {

    @Test
    void aWriterOnAMajorityHoldsWithTheMajorityThLargestTokenAndLease() {
        LockInfo info = MajorityLockInfo.of("orders", List.of(
                reply(900L, 0L, "c1:7", 1L, 40L),
                reply(700L, 2L, "c1:7", 1L, 41L),
                reply(-2L, 1L, "", 0L, 0L)), 2);

        assertThat(info).isEqualTo(new LockInfo("orders", LockKind.EXCLUSIVE, Map.of("c1:7", 1), 40,
                Duration.ofMillis(700), 2, 0));
    }

    @Test
    void readersOnAMajorityShareItAndAHoldOnAMinorityIsFree() {
        LockInfo shared = MajorityLockInfo.of("orders", List.of(
                reply(-1L, 0L, "", 0L, 0L, "c1:1", 2L, 12L, "c2:1", 1L, 90L),
                reply(500L, 0L, "", 0L, 0L, "c1:1", 1L, 12L),
                reply(-2L, 0L, "c3:1", 1L, 99L)), 2);
        assertThat(shared).isEqualTo(new LockInfo("orders", LockKind.SHARED, Map.of("c1:1", 1), 12,
                Duration.ofMillis(500), 0, 0));

        LockInfo free = MajorityLockInfo.of("orders", List.of(
                reply(800L, 0L, "c3:1", 1L, 99L),
                reply(-2L, 0L, "", 0L, 0L),
                reply(-2L, 0L, "", 0L, 0L)), 2);
        assertThat(free.kind()).isEqualTo(LockKind.FREE);
        assertThat(free.remainingLease()).isEqualTo(Duration.ZERO);
    }

    @Test
    void aWriterWithoutExpiryOnAMajorityHoldsForever() {
        LockInfo info = MajorityLockInfo.of("orders", List.of(
                reply(-1L, 0L, "c1:7", 1L, 40L),
                reply(-1L, 0L, "c1:7", 1L, 40L)), 2);
        assertThat(info.remainingLease()).isEqualTo(ChronoUnit.FOREVER.getDuration());
    }

    private static InspectReply reply(Object... fields) {
        return InspectReply.decode(List.of(fields));
    }
}
