package dev.relock.bench;

import io.lettuce.core.RedisURI;
import java.time.Duration;
import java.util.concurrent.locks.Lock;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.integration.redis.util.RedisLockRegistry;
import org.springframework.integration.redis.util.RedisLockRegistry.RedisLockType;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

/**
 * Spring Integration's RedisLockRegistry in SPIN or PUB_SUB mode over a LettuceConnectionFactory,
 * with its defaults (60 s expiry, no renewal) unless a lease is asked for: then the registry expires
 * locks after that lease and renews them on a one-thread ThreadPoolTaskScheduler.
 */
final class SpringSubject implements Subject {

    private final String version;
    private final RedisLockType type;

    SpringSubject(String version, RedisLockType type) {
        this.version = version;
        this.type = type;
    }

    @Override
    public String label() {
        return "Spring RedisLockRegistry " + version + " " + (type == RedisLockType.SPIN_LOCK ? "SPIN" : "PUB_SUB");
    }

    @Override
    public String family() {
        return "spring";
    }

    @Override
    public boolean waits() {
        return true;
    }

    @Override
    public boolean renews() {
        return true;
    }

    @Override
    public Client connect(String redisUri, Duration lease) {
        RedisURI uri = RedisURI.create(redisUri);
        LettuceConnectionFactory factory =
                new LettuceConnectionFactory(new RedisStandaloneConfiguration(uri.getHost(), uri.getPort()));
        factory.afterPropertiesSet();
        factory.start();
        RedisLockRegistry registry = lease == null
                ? new RedisLockRegistry(factory, "bench-spring")
                : new RedisLockRegistry(factory, "bench-spring", lease);
        registry.setRedisLockType(type);
        ThreadPoolTaskScheduler scheduler;
        if (lease != null) {
            scheduler = new ThreadPoolTaskScheduler();
            scheduler.setPoolSize(1);
            scheduler.setThreadNamePrefix("spring-lock-renewal-");
            scheduler.setDaemon(true);
            scheduler.initialize();
            registry.setRenewalTaskScheduler(scheduler);
        } else {
            scheduler = null;
        }
        return new Client() {
            @Override
            public Lock lock(String name) {
                return registry.obtain(name);
            }

            @Override
            public void close() {
                registry.destroy();
                if (scheduler != null) {
                    scheduler.shutdown();
                }
                factory.destroy();
            }
        };
    }
}
