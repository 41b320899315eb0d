package dev.relock.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.relock.RelockSettings;
import dev.relock.StderrCapture;
import dev.relock.internal.metrics.LockEvents;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The blocking wait's backstop, without Redis: a state machine that never decides cannot hang a bounded wait. */
class SteppedAcquisitionTest {

    private static final long WAIT_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    private static final long SETTLING_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

    /**
     * The fault campaign saw a Redlock {@code tryLock(wait)} that never returned (issue 15). Whatever the lost
     * event, the caller now returns once the wait and the settling time are over, as after a timeout, and the
     * client logs an ERROR with the state machine's state.
     */
    @Test
    void aWaitWhoseAcquisitionNeverDecidesEndsAfterItsDeadlineAndTheBugIsLogged() throws Exception {
        ScheduledExecutorService events = Executors.newSingleThreadScheduledExecutor();
        EngineClient core = new EngineClient(new RelockSettings("test", Duration.ofSeconds(30), Duration.ofSeconds(1),
                Duration.ofMillis(50)), List.of(), client -> null);
        boolean[] gaveUp = {false};
        SteppedAcquisition lostEvent = new SteppedAcquisition(core, events, "stuck", LockKeys.of("test", "stuck"),
                LockMode.WRITE, "owner", 30_000, true) {
            @Override
            protected LockEvents.Wait started() {
                return LockEvents.NONE.waitStarted(mode, name);
            }

            @Override
            protected void begin(long waitNanos) {
                // the event that should drive the next step is lost: no timer armed, nothing in flight
            }

            @Override
            protected void giveUp() {
                gaveUp[0] = true;
                finish(null, null);
            }

            @Override
            protected void releaseUnseen(Hold hold) {}

            @Override
            protected void handlingFailed(RuntimeException error) {
                finish(null, error);
            }

            @Override
            protected void finish(Hold hold, RuntimeException error) {
                decide(hold, error);
            }

            @Override
            protected String describe() {
                return "nothing armed";
            }

            @Override
            protected long settlingNanos() {
                return SETTLING_NANOS;
            }
        };
        long start = System.nanoTime();
        Hold hold;
        String logged;
        try (StderrCapture err = new StderrCapture()) {
            hold = lostEvent.run(WAIT_NANOS, false, true);
            logged = err.text();
        } finally {
            events.shutdownNow();
        }
        long waited = System.nanoTime() - start;
        assertThat(hold).as("no hold, as after a wait that ran out").isNull();
        assertThat(gaveUp[0]).as("given up as a cancel gives up, undoing what is in flight").isTrue();
        assertThat(waited).as("ns until the caller returned")
                .isGreaterThanOrEqualTo(WAIT_NANOS + SETTLING_NANOS)
                .isLessThan(TimeUnit.SECONDS.toNanos(15));
        assertThat(logged).contains("ERROR").contains("lock 'stuck' by owner")
                .contains("This is a bug in relock").contains("decided=false").contains("timer=none")
                .contains("nothing armed");
    }
}
