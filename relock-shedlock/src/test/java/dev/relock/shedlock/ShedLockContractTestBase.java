package dev.relock.shedlock;

import static org.assertj.core.api.Assertions.assertThat;

import dev.relock.RelockClient;
import dev.relock.testredis.RedisServer;
import java.time.Duration;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.test.support.AbstractExtensibleLockProviderIntegrationTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * ShedLock's own contract test for extensible lock providers (and its fuzz tester, which it runs)
 * against relock on a real redis-server from the fixture. The contract makes a new test instance,
 * and so a new lock name, per test; the server and client live as long as the class.
 */
abstract class ShedLockContractTestBase extends AbstractExtensibleLockProviderIntegrationTest {

    /**
     * The default lease of the client: short, so that renewal is what keeps a lock alive, yet long enough for a
     * loaded machine: a hold is reported lost when no renewal is confirmed within the lease less its drift.
     */
    static final Duration DEFAULT_LEASE = Duration.ofSeconds(1);

    static RedisServer redis;
    static RelockClient client;

    @BeforeAll
    static void startRedisAndClient() {
        redis = RedisServer.start();
        client = RelockClient.builder().redisUri(redis.uri()).defaultLease(DEFAULT_LEASE).build();
    }

    @AfterAll
    static void stopClientAndRedis() {
        try {
            client.close();
        } finally {
            redis.close();
        }
    }

    abstract RelockLockProvider provider();

    @Override
    protected ExtensibleLockProvider getLockProvider() {
        return provider();
    }

    @Override
    protected void assertLocked(String lockName) {
        assertThat(client.lock(provider().lockName(lockName)).isLocked()).as("%s locked", lockName).isTrue();
    }

    @Override
    protected void assertUnlocked(String lockName) {
        assertThat(client.lock(provider().lockName(lockName)).isLocked()).as("%s locked", lockName).isFalse();
    }
}
