package dev.relock.contract;

import static org.awaitility.Awaitility.await;

import java.time.Duration;
import org.awaitility.core.ConditionFactory;

/**
 * Awaitility for conditions that usually hold within a round trip or two: the first check at once,
 * then every 10 ms, up to {@link ContractBase#HANG}. Awaitility's default waits 100 ms before its
 * first check, which a test that waits for thirty queued acquisitions one by one pays thirty times
 * on each deployment.
 */
final class Polling {

    private Polling() {
    }

    /** An await that checks at once and every 10 ms, failing after {@link ContractBase#HANG}. */
    static ConditionFactory soon() {
        return await().atMost(ContractBase.HANG).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(10));
    }

    /** As {@link #soon()}, named in the failure message. */
    static ConditionFactory soon(String what) {
        return await(what).atMost(ContractBase.HANG).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(10));
    }
}
