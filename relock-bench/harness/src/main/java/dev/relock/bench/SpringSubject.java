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
 * Spring Integration's RedisLockRegistry in SPIN or PUB_SUB mode over a LettuceConnectionFactory, with its defaults
 * (60 s expiry, no renewal) unless a lease is asked for: then the registry expires locks after that lease and renews
 * them on a one-thread ThreadPoolTaskScheduler. Either the line on the harness's class path (7.0) or a
 * {@link SpringLine} loaded from jars of its own (6.5), configured alike.
 */
final class SpringSubject implements Subject {

    /** Opens one client: a connection factory and a registry in this subject's mode. */
    private interface Connector {
        Client connect(String redisUri, Duration lease) throws Exception;
    }

    private final String version;
    private final RedisLockType type;
    private final Connector connector;

    private SpringSubject(String version, RedisLockType type, Connector connector) {
        this.version = version;
        this.type = type;
        this.connector = connector;
    }

    /** The line on the harness's class path. */
    static SpringSubject onClassPath(RedisLockType type) {
        return new SpringSubject(Environment.versionOf(RedisLockRegistry.class), type,
                (redisUri, lease) -> connectOnClassPath(type, redisUri, lease));
    }

    /**
     * A line in a class loader of its own; its registry keys are its own too ("bench-spring" + version), so it never
     * meets the keys of the line on the class path.
     */
    static SpringSubject of(SpringLine line, RedisLockType type) {
        return new SpringSubject(line.version(), type,
                (redisUri, lease) -> line.connect(redisUri, "bench-spring" + line.version(), type.name(), lease));
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
    public Client connect(String redisUri, Duration lease) throws Exception {
        return connector.connect(redisUri, lease);
    }

    private static Client connectOnClassPath(RedisLockType type, String redisUri, Duration lease) {
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
