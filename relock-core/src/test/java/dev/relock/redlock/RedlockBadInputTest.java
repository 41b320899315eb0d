package dev.relock.redlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.relock.RedisUnavailableException;
import dev.relock.RelockClient;
import dev.relock.RelockClientBuilder;
import dev.relock.RelockLock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The Redlock builder and lock refuse bad input with exceptions that say what was wrong: server lists,
 * settings that apply to one kind of deployment only, leases within the clock drift allowance. Names,
 * leases and settings every deployment refuses alike are {@code contract/BadInputContract}.
 */
@Tag("redis")
class RedlockBadInputTest extends RedlockTestBase {

    @Override
    int nodeCount() {
        return 3;
    }

    @Test
    void theNumberOfServersMustBeOddFromThreeToSeven() {
        for (int count : new int[] {0, 1, 2, 4, 6, 8, 9}) {
            List<String> uris = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                uris.add("redis://127.0.0.1:" + (20000 + i));
            }
            assertThatThrownBy(() -> RelockClient.builder().redlockUris(uris))
                    .as("%d servers", count)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("odd number of 3 to 7")
                    .hasMessageContaining("got " + count);
        }
        assertThatThrownBy(() -> RelockClient.builder().redlock((String[]) null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> RelockClient.builder().redlock("redis://a:1", null, "redis://b:1"))
                .isInstanceOf(NullPointerException.class);
    }

    @Test
    void serversMustBeDistinctValidMasters() {
        assertThatThrownBy(() -> RelockClient.builder()
                        .redlock("redis://127.0.0.1:7000", "redis://127.0.0.1:7001", "redis://127.0.0.1:7000/2"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("distinct")
                .hasMessageContaining("127.0.0.1:7000");
        assertThatThrownBy(() -> RelockClient.builder()
                        .redlock("redis://127.0.0.1:7000", "redis://:secret@bad host:x", "redis://127.0.0.1:7002"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not a valid Redis URI")
                .hasMessageNotContaining("secret");
        assertThatThrownBy(() -> RelockClient.builder()
                        .redlock("redis://127.0.0.1:7000", "redis-sentinel://127.0.0.1:26379#mymaster",
                                "redis://127.0.0.1:7002"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("Sentinel");
    }

    @Test
    void redlockExcludesASingleServerAndDriftNeedsRedlock() {
        RelockClientBuilder both = RelockClient.builder().redisUri(nodes.get(0).uri()).redlockUris(uris());
        assertThatThrownBy(both::build).isInstanceOf(IllegalStateException.class).hasMessageContaining("redlock");
        RelockClientBuilder driftAlone = RelockClient.builder().redisUri(nodes.get(0).uri())
                .clockDrift(0.01, Duration.ZERO);
        assertThatThrownBy(driftAlone::build).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("clockDrift");
        assertThatThrownBy(() -> RelockClient.builder().clockDrift(-0.1, Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("0..0.5");
        assertThatThrownBy(() -> RelockClient.builder().clockDrift(Double.NaN, Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> RelockClient.builder().clockDrift(0.6, Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> RelockClient.builder().clockDrift(0.01, Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("negative");
    }

    @Test
    void aMajorityMustBeReachableToBuild() {
        List<String> uris = new ArrayList<>(Arrays.asList(nodes.get(0).uri(), "redis://127.0.0.1:1", "redis://127.0.0.1:2"));
        assertThatThrownBy(() -> RelockClient.builder().redlockUris(uris).commandTimeout(Duration.ofMillis(500)).build())
                .isInstanceOf(RedisUnavailableException.class)
                .hasMessageContaining("of 3 Redlock nodes answered, a majority needs 2")
                .hasMessageContaining("127.0.0.1:2");
        // two of three reachable is enough; the third is connected again in the background
        uris.set(1, nodes.get(1).uri());
        RelockClient client = newClientOn(uris);
        RelockLock lock = client.lock("two-of-three");
        assertThat(lock.tryLock()).isTrue();
        lock.unlock();
    }

    /**
     * A lease no longer than the clock drift allowance could not be counted on at all. A single server
     * has no such allowance and takes even a lease shorter than a millisecond (BadInputTest).
     */
    @Test
    void leasesWithinTheClockDriftAllowanceAreRefused() {
        RelockLock lock = newClient(b -> b.clockDrift(0.01, Duration.ofMillis(5))).lock("checked");
        assertThatThrownBy(() -> lock.tryLock(0, 5, TimeUnit.MILLISECONDS))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("clock drift");
        // the default allowance: 1 % of the lease and 50 ms
        RelockClient client = newClient();
        RelockLock read = client.readWriteLock("bad").readLock();
        assertThatThrownBy(() -> read.tryAcquireAsync(Duration.ZERO, Duration.ofMillis(2)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("clock drift");
        assertThatThrownBy(() -> client.lock("tiny").lock(1, TimeUnit.NANOSECONDS))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("clock drift");
        assertThat(client.lock("tiny").isLocked()).isFalse();
    }

    private RelockClient newClientOn(List<String> uris) {
        RelockClient client = RelockClient.builder().redlockUris(uris).build();
        registerForClose(client);
        return client;
    }
}
