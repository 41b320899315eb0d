package dev.relock.docs;

import dev.relock.RelockClient;
import dev.relock.integration.RelockLockRegistry;
import dev.relock.shedlock.RelockLockProvider;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.provider.redis.spring.RedisLockProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.integration.redis.util.RedisLockRegistry;
import org.springframework.integration.support.locks.LockRegistry;
import org.springframework.scheduling.TaskScheduler;

/**
 * The before and after of docs/migrating-from-spring-and-shedlock.md, compiled against Spring Integration's
 * RedisLockRegistry, ShedLock's Redis provider and relock's adapters (never run): each region between markers is
 * its block line for line (relock-core's DocSnippetsTest).
 */
abstract class SpringAndShedLockMigration {

    /** Before, with Spring Integration's registry. */
    static class RedisLockRegistryConfiguration {

        // snippet docs/migrating-from-spring-and-shedlock.md#redislockregistry--relocklockregistry
        @Bean
        RedisLockRegistry lockRegistry(RedisConnectionFactory redis, TaskScheduler scheduler) {
            RedisLockRegistry registry = new RedisLockRegistry(redis, "my-app", 60_000);
            registry.setRedisLockType(RedisLockRegistry.RedisLockType.PUB_SUB_LOCK);
            registry.setRenewalTaskScheduler(scheduler);    // renew held locks
            return registry;
        }
        // snippet end
    }

    /** After, with relock's. */
    static class RelockLockRegistryConfiguration {

        // snippet docs/migrating-from-spring-and-shedlock.md#redislockregistry--relocklockregistry~2
        @Bean
        RelockLockRegistry lockRegistry(RelockClient relock) {   // the starter's client
            return new RelockLockRegistry(relock, "my-app");      // renewed while held, woken by messages
        }
        // snippet end
    }

    void useEither(LockRegistry<?> registry) throws InterruptedException {
        // snippet docs/migrating-from-spring-and-shedlock.md#redislockregistry--relocklockregistry~3
        Lock lock = registry.obtain("invoice:42");
        if (lock.tryLock(5, TimeUnit.SECONDS)) {
            try {
                bill(42);
            } finally {
                lock.unlock();
            }
        }
        // snippet end
    }

    /** Before, with ShedLock's Redis provider. */
    static class RedisLockProviderConfiguration {

        // snippet docs/migrating-from-spring-and-shedlock.md#shedlocks-redis-provider--relocklockprovider
        @Bean
        LockProvider lockProvider(RedisConnectionFactory redis) {
            return new RedisLockProvider(redis, "production");
        }
        // snippet end
    }

    /** After, with relock's. */
    static class RelockLockProviderConfiguration {

        // snippet docs/migrating-from-spring-and-shedlock.md#shedlocks-redis-provider--relocklockprovider~2
        @Bean
        LockProvider lockProvider(RelockClient relock) {
            return new RelockLockProvider(relock, "production", RelockLockProvider.Lease.RENEWED_WHILE_RUNNING);
        }
        // snippet end
    }

    abstract void bill(long invoice);
}
