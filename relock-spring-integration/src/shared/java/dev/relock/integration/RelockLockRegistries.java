package dev.relock.integration;

import dev.relock.RelockClient;
import dev.relock.spring.data.SpringDataRedis;
import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * Registries made from a Spring Data Redis connection factory, for users of {@code RedisLockRegistry}, whose
 * constructor takes one; one line changes:
 *
 * <pre>{@code
 * @Bean
 * RelockLockRegistry lockRegistry(RedisConnectionFactory connectionFactory) {
 *     return RelockLockRegistries.fromConnectionFactory(connectionFactory, "my-app"); // was new RedisLockRegistry(...)
 * }
 * }</pre>
 *
 * <p>Apart from {@link RelockLockRegistry} so that the registry's class names no Spring Data Redis type: Spring
 * introspects every method of a bean's class, and Spring Data Redis is an optional dependency, needed on the class
 * path only by the applications that call this class. The same source serves both Spring Integration lines, each
 * with its own {@code RelockLockRegistry}.
 */
public final class RelockLockRegistries {

    private RelockLockRegistries() {}

    /**
     * A registry whose locks are named {@code registryKey + ":" + key} in a relock client of its own, which connects
     * where {@code connectionFactory} does, as {@code new RedisLockRegistry(connectionFactory, registryKey)} would:
     * one Redis, a Sentinel master or a Redis Cluster, with its credentials, database and TLS (what is read and what
     * is refused: {@link SpringDataRedis#clientBuilder}). The client has relock's default settings and connects now;
     * the registry owns it, and {@link RelockLockRegistry#close()} closes it (as Spring does for a {@code @Bean}
     * registry when its context closes). The factory is only read: it need not be started, and is not closed.
     *
     * @throws NullPointerException if connectionFactory or registryKey is null
     * @throws IllegalArgumentException if registryKey is blank, or relock cannot connect as the factory would (it is
     *     not a {@code LettuceConnectionFactory}, or it uses what a Redis URI cannot carry), naming why
     * @throws dev.relock.RelockException if Redis cannot be reached
     */
    public static RelockLockRegistry fromConnectionFactory(RedisConnectionFactory connectionFactory,
            String registryKey) {
        // the key first, so that a bad one leaves no client open
        AbstractRelockLockRegistry.checkedRegistryKey(registryKey);
        RelockClient client = SpringDataRedis.clientBuilder(connectionFactory).build();
        return new RelockLockRegistry(client, registryKey, true);
    }
}
