package dev.relock.spring.boot;

import dev.relock.LeaseLostListener;
import dev.relock.RelockClient;
import dev.relock.RelockClientBuilder;
import dev.relock.spring.data.internal.RedisEndpoint;
import dev.relock.spring.internal.DistributedLockAdvisor;
import io.lettuce.core.RedisClient;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportRuntimeHints;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;

/**
 * Auto-configures a {@link RelockClient}, unless the application declares one, and applies
 * {@link dev.relock.spring.DistributedLock} to its beans.
 *
 * <p>The client connects through, in this order: a Lettuce {@link RedisClient} bean if the
 * application has exactly one (relock then leaves its shutdown to the application), or the
 * {@code spring.data.redis.*} properties (url, host, port, username, password, database,
 * ssl.enabled, timeout, sentinel.master and nodes, cluster.nodes). Every {@link LeaseLostListener} bean is told of lost leases, and every
 * {@link RelockClientBuilderCustomizer} bean adjusts the builder. The client connects at start-up where Redis
 * answers, else on first use, so the application starts while Redis is down; it is closed when the context closes.
 * {@code relock.enabled=false} turns all of it off.
 *
 * <p>Only APIs that Boot 3.5 and 4.x share are used here, so the one jar serves both lines. An application compiled
 * ahead of time gets the hints of {@link RelockRuntimeHints} with it.
 */
@AutoConfiguration
@ConditionalOnClass(RelockClient.class)
@ConditionalOnProperty(prefix = "relock", name = "enabled", havingValue = "true", matchIfMissing = true)
@EnableConfigurationProperties(RelockProperties.class)
@Import(AutoProxyCreatorRegistrar.class)
@ImportRuntimeHints(RelockRuntimeHints.class)
public class RelockAutoConfiguration {

    private static final Logger log = LoggerFactory.getLogger(RelockAutoConfiguration.class);

    /**
     * The client ({@link LazyRelockClient}): a Redis that cannot be reached fails the calls that need it, not the
     * start-up. Settings relock cannot follow, or a reachable server cannot serve, fail the start-up.
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    public RelockClient relockClient(RelockProperties properties, Environment environment,
            ObjectProvider<RedisClient> lettuceClient, ObjectProvider<LeaseLostListener> leaseLostListeners,
            ObjectProvider<RelockClientBuilderCustomizer> customizers) {
        SpringDataRedisSettings redis = SpringDataRedisSettings.bind(environment);
        RelockClientBuilder builder = RelockClient.builder();
        RedisClient existing = lettuceClient.getIfUnique();
        String target;
        if (existing != null) {
            builder.redisClient(existing);
            target = "the application's Lettuce RedisClient";
        } else {
            RedisEndpoint endpoint = redis.endpoint();
            endpoint.applyTo(builder);
            target = endpoint.describe();
        }
        if (properties.getKeyPrefix() != null) {
            builder.keyPrefix(properties.getKeyPrefix());
        }
        // names only: a long spring.application.name or an empty label (relock.client-label=${LABEL:}) never fails
        // the start-up
        String application = environment.getProperty("spring.application.name");
        if (application != null && !application.isBlank()) {
            builder.applicationName(atMost64(application.strip()));
        }
        if (properties.getClientLabel() != null && !properties.getClientLabel().isBlank()) {
            builder.clientLabel(atMost64(properties.getClientLabel().strip()));
        }
        if (properties.getDefaultLease() != null) {
            builder.defaultLease(properties.getDefaultLease());
        }
        Duration commandTimeout = properties.getCommandTimeout() != null ? properties.getCommandTimeout() : redis.timeout();
        if (commandTimeout != null) {
            builder.commandTimeout(commandTimeout);
        }
        if (properties.getHandoffGrace() != null) {
            builder.handoffGrace(properties.getHandoffGrace());
        }
        if (properties.getReplicationGuard().isEnabled()) {
            builder.replicationGuard(properties.getReplicationGuard().toGuard());
        }
        leaseLostListeners.orderedStream().forEach(builder::leaseLostListener);
        customizers.orderedStream().forEach(customizer -> customizer.customize(builder));
        log.info("relock: locks on {}", target);
        RelockClient client = LazyRelockClient.of(builder::build, target);
        LazyRelockClient.handlerOf(client).tryToConnect();
        return client;
    }

    private static String atMost64(String name) {
        return name.length() <= 64 ? name : name.substring(0, 64);
    }

    /**
     * The advisor behind {@code @DistributedLock}. Static and infrastructure, as advisors must be:
     * the auto-proxy creator picks it up before the application's beans exist.
     */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    public static DistributedLockAdvisor relockDistributedLockAdvisor(ObjectProvider<RelockClient> client) {
        return new DistributedLockAdvisor(client::getObject);
    }
}
