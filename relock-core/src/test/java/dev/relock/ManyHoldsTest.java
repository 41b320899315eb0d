package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Many locks held by one client: one renewal thread, batched renewals, no lease lost. */
@Tag("redis")
class ManyHoldsTest extends OneServerTestBase {

    private static final int HOLDS = 2_000;
    private static final Duration LEASE = Duration.ofMillis(1_500);

    @Test
    void thousandsOfHoldsAreRenewedInBatchesByOneThread() throws Exception {
        RelockClient client = newClient(b -> b.defaultLease(LEASE));
        List<LockHandle> held = new ArrayList<>();
        for (int i = 0; i < HOLDS; i++) {
            held.add(client.lock("many:" + i).acquire());
        }
        long keeperThreads = Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().equals("relock-lease-keeper-" + client.clientId().substring(0, 8)))
                .count();
        assertThat(keeperThreads).as("renewal threads of this client").isEqualTo(1);

        long callsBefore = scriptCalls();
        Thread.sleep(3 * LEASE.toMillis()); // on purpose: three leases, kept only by renewals
        long calls = scriptCalls() - callsBefore;

        // every lease/3 (500 ms) one batch per 500 holds: about 4 × 9 = 36 calls in the window;
        // a renewal per hold would be thousands
        assertThat(calls).as("script calls while %d locks were held for 3 leases", HOLDS).isBetween(8L, 100L);
        assertThat(held).allMatch(LockHandle::isValid);
        assertThat(newClient().lock("many:0").tryLock()).isFalse();
        for (LockHandle handle : held) {
            handle.close();
        }
    }

}
