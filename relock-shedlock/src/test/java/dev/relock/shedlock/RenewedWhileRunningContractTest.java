package dev.relock.shedlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * ShedLock's contract with the default {@link RelockLockProvider.Lease#RENEWED_WHILE_RUNNING}.
 * Two tests of the contract are replaced on purpose: they expect a held lock to free itself after
 * {@code lockAtMostFor}, and this lease keeps it while its holder lives, as ShedLock's
 * {@code KeepAliveLockProvider} does.
 */
@Tag("redis")
class RenewedWhileRunningContractTest extends ShedLockContractTestBase {

    @Override
    RelockLockProvider provider() {
        return new RelockLockProvider(client);
    }

    /** Replaces the contract's test: the lock outlives lockAtMostFor and several default leases. */
    @Test
    @Override
    public void shouldTimeout() {
        String job = "job-" + System.nanoTime();
        Optional<SimpleLock> lock = provider().lock(
                new LockConfiguration(Instant.now(), job, Duration.ofMillis(50), Duration.ZERO));
        assertThat(lock).isPresent();

        await().during(DEFAULT_LEASE.multipliedBy(3)).atMost(DEFAULT_LEASE.multipliedBy(10))
                .untilAsserted(() -> assertLocked(job));

        lock.get().unlock();
        assertUnlocked(job);
    }

    /** Replaces the contract's test: a renewed lease does not expire, so this one is lost by force. */
    @Test
    @Override
    public void shouldNotBeAbleToExtendExpiredLock() {
        String job = "job-" + System.nanoTime();
        Optional<SimpleLock> lock = provider().lock(
                new LockConfiguration(Instant.now(), job, Duration.ofMillis(2), Duration.ZERO));
        assertThat(lock).isPresent();
        assertThat(client.lock(provider().lockName(job)).forceUnlock()).isTrue();

        assertThat(lock.get().extend(Duration.ofSeconds(10), Duration.ZERO)).isEmpty();
        assertUnlocked(job);
    }
}
