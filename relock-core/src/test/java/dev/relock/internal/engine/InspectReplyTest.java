package dev.relock.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.relock.LockInfo;
import dev.relock.LockKind;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Decoding one server's inspect.lua reply, without Redis. */
class InspectReplyTest {

    @Test
    void aWritersReplyIsTheWriterWithItsHoldsTokenAndLease() {
        InspectReply reply = InspectReply.decode(List.of(2_500L, 1L, "c1:7", 2L, 40L));

        assertThat(reply.hasWriter()).isTrue();
        assertThat(reply.readers()).isEmpty();
        assertThat(reply.toLockInfo("orders")).isEqualTo(new LockInfo("orders", LockKind.EXCLUSIVE,
                Map.of("c1:7", 2), 40, Duration.ofMillis(2_500), 1, 0));
    }

    @Test
    void readersShareTheLockWithTheLargestOfTheirTokens() {
        InspectReply reply = InspectReply.decode(List.of(-1L, 0L, "", 0L, 0L, "c1:1", 1L, 12L, "c2:1", 3L, 15L));

        assertThat(reply.hasWriter()).isFalse();
        assertThat(reply.readers()).containsExactly(new InspectReply.Reader("c1:1", 1, 12),
                new InspectReply.Reader("c2:1", 3, 15));
        assertThat(reply.toLockInfo("orders")).isEqualTo(new LockInfo("orders", LockKind.SHARED,
                Map.of("c1:1", 1, "c2:1", 3), 15, ChronoUnit.FOREVER.getDuration(), 0, 0));
    }

    @Test
    void aLockNobodyHoldsIsFreeWithNoLease() {
        assertThat(InspectReply.decode(List.of(-2L, 2L, "", 0L, 0L)).toLockInfo("orders"))
                .isEqualTo(new LockInfo("orders", LockKind.FREE, Map.of(), 0, Duration.ZERO, 2, 0));
    }

    @Test
    void aLeaseIsForeverWithoutExpiryAndNeverNegative() {
        assertThat(InspectReply.leaseOf(-1)).isEqualTo(ChronoUnit.FOREVER.getDuration());
        assertThat(InspectReply.leaseOf(-2)).isEqualTo(Duration.ZERO);
        assertThat(InspectReply.leaseOf(17)).isEqualTo(Duration.ofMillis(17));
    }
}
