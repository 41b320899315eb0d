package dev.relock.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * How the identity record's additions are spaced: one comes {@link RecordWrites#NAMING_DELAY_NANOS} after the hold
 * that scheduled it, not a nanosecond before, and takes every hold handed out meanwhile, so many holds cost one write.
 * The timer is the hand-moved clock. (The spacing from the last addition, read on the client's ticker, is shorter
 * than the naming delay, so it never decides the time here.)
 */
class RecordWritesClockTest {

    private final HandMovedClock clock = new HandMovedClock();
    private final EngineClient client = ClientOnAClock.of(clock);
    private final List<List<String>> additions = new ArrayList<>();
    private final RecordWrites writes = new RecordWrites(client, clock, whole -> {
    }, fields -> additions.add(List.of(fields)));

    /** A hold of the thread with id {@code threadId}, named {@code threadName}, in the client's table. */
    private Hold handedOut(String name, long threadId, String threadName) {
        Hold hold = ClientOnAClock.writeHold(client, name, client.ownerOfThread(threadId), 30_000);
        hold.acquiredOn(threadName);
        client.holds().add(hold);
        return hold;
    }

    @Test
    void anAdditionComesTheNamingDelayAfterTheHoldThatScheduledItAndTakesTheHoldsSince() {
        writes.nameHolder(handedOut("first", 11, "worker-11"));
        clock.advance(RecordWrites.NAMING_DELAY_NANOS / 2);
        writes.nameHolder(handedOut("second", 12, "worker-12"));

        clock.advanceTo(clock.nanoTime() + RecordWrites.NAMING_DELAY_NANOS / 2 - 1);
        assertThat(additions).as("1 ns before the naming delay").isEmpty();

        clock.advance(1);
        assertThat(additions).as("one write for both holds").hasSize(1);
        assertThat(additions.get(0)).containsExactlyInAnyOrder("t:11", "worker-11", "t:12", "worker-12");
    }

    @Test
    void aHoldHandedOutAfterAnAdditionWaitsTheNamingDelayAgain() {
        writes.nameHolder(handedOut("first", 11, "worker-11"));
        clock.advance(RecordWrites.NAMING_DELAY_NANOS);
        assertThat(additions).hasSize(1);

        writes.nameHolder(handedOut("again", 11, "worker-11"));
        writes.nameHolder(handedOut("next", 13, "worker-13"));
        clock.advance(RecordWrites.NAMING_DELAY_NANOS - 1);
        assertThat(additions).as("1 ns before the next naming delay").hasSize(1);

        clock.advance(1);
        assertThat(additions).as("the owner named already is not written again").hasSize(2)
                .last().isEqualTo(List.of("t:13", "worker-13"));
    }
}
