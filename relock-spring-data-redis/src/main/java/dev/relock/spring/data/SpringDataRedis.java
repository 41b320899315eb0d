package dev.relock.spring.data;

import dev.relock.RelockClient;
import dev.relock.RelockClientBuilder;
import dev.relock.spring.data.internal.RedisEndpoint;
import io.lettuce.core.ClientOptions;
import java.lang.reflect.Field;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisConfiguration;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisNode;
import org.springframework.data.redis.connection.RedisPassword;
import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.RedisSocketConfiguration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.RedisStaticMasterReplicaConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * relock clients that connect where a Spring Data Redis connection factory does, for applications that configure
 * Redis once, as a {@link RedisConnectionFactory}:
 *
 * <pre>{@code
 * RelockClient relock = SpringDataRedis.clientBuilder(connectionFactory).keyPrefix("billing").build();
 * }</pre>
 *
 * <p>relock reads the configuration of a {@link LettuceConnectionFactory}: one Redis
 * ({@code RedisStandaloneConfiguration}: host, port, database, username and password), a Sentinel master
 * ({@code RedisSentinelConfiguration}: master name, Sentinel nodes, database and the data nodes' username and
 * password) or a Redis Cluster ({@code RedisClusterConfiguration}: nodes, username and password), and from its
 * {@code LettuceClientConfiguration} whether to use TLS and how to verify the server's certificate. It reads the
 * configuration the factory connects with, however it was given (a typed constructor, or
 * {@code new LettuceConnectionFactory(LettuceConnectionFactory.createRedisConfiguration(url))}). It opens
 * connections of its own with them; the factory need not be started, and is neither used nor closed by relock.
 * The rest of the client configuration (command timeout, client options, client resources, client name, read-from)
 * is not carried over: the client has relock's settings, which the returned builder changes. A factory whose TLS
 * depends on what is not carried over (SslOptions of its own: a trust store, a client certificate) is refused.
 *
 * <p>Spring Data Redis (3.x or 4.x) is an optional dependency of this module: only this class needs it.
 */
public final class SpringDataRedis {

    private SpringDataRedis() {}

    /**
     * A builder of a relock client that connects where {@code connectionFactory} does (its {@code redisUri} or
     * {@code redisClusterUris} set), with relock's defaults for everything else.
     *
     * @throws NullPointerException if connectionFactory is null
     * @throws IllegalArgumentException if relock cannot connect as the factory would, naming why: it is not a
     *     {@code LettuceConnectionFactory} (a {@code JedisConnectionFactory}, for one), or it uses a Unix domain
     *     socket, static master/replica nodes, STARTTLS, TLS with SslOptions of its own, a credentials provider
     *     factory, or a username or password for the Sentinels themselves; or its configuration cannot be read
     */
    public static RelockClientBuilder clientBuilder(RedisConnectionFactory connectionFactory) {
        return endpointOf(connectionFactory).applyTo(RelockClient.builder());
    }

    /** Where {@code connectionFactory} connects, as {@link #clientBuilder} describes. */
    static RedisEndpoint endpointOf(RedisConnectionFactory connectionFactory) {
        Objects.requireNonNull(connectionFactory, "connectionFactory");
        if (!(connectionFactory instanceof LettuceConnectionFactory lettuce)) {
            throw new IllegalArgumentException("relock can read the configuration of a LettuceConnectionFactory only,"
                    + " not of a " + connectionFactory.getClass().getName() + ": configure the RelockClient with"
                    + " RelockClient.builder().redisUri(...) (or redisClusterUris(...)) instead");
        }
        LettuceClientConfiguration client = lettuce.getClientConfiguration();
        refuseWhatAUriCannotCarry(client);
        RedisEndpoint.Builder endpoint = RedisEndpoint.builder().tls(client.isUseSsl() ? client.getVerifyMode() : null);
        RedisConfiguration configuration = configurationOf(lettuce);
        if (configuration instanceof RedisClusterConfiguration cluster) {
            return endpoint.credentials(cluster.getUsername(), text(cluster.getPassword()))
                    .cluster(hostsAndPorts(cluster.getClusterNodes()));
        }
        if (configuration instanceof RedisSentinelConfiguration sentinel) {
            if (sentinel.getSentinelUsername() != null || sentinel.getSentinelPassword().isPresent()) {
                // a Lettuce URI carries one set of credentials, which Lettuce gives the data nodes only
                throw new IllegalArgumentException("The RedisSentinelConfiguration has a username or password for the"
                        + " Sentinels, which relock's Redis URI cannot carry; give relock a Lettuce RedisClient"
                        + " configured with them (RelockClient.builder().redisClient(...)) instead");
            }
            if (sentinel.getMaster() == null) {
                throw new IllegalArgumentException("The RedisSentinelConfiguration names no master");
            }
            return endpoint.credentials(sentinel.getUsername(), text(sentinel.getPassword()))
                    .database(sentinel.getDatabase())
                    .sentinel(sentinel.getMaster().getName(), hostsAndPorts(sentinel.getSentinels()));
        }
        if (configuration instanceof RedisStandaloneConfiguration standalone) {
            return endpoint.credentials(standalone.getUsername(), text(standalone.getPassword()))
                    .database(standalone.getDatabase())
                    .standalone(standalone.getHostName(), standalone.getPort());
        }
        throw refused(configuration instanceof RedisSocketConfiguration
                ? "connects through a Unix domain socket (RedisSocketConfiguration); relock connects over TCP"
                : configuration instanceof RedisStaticMasterReplicaConfiguration
                ? "has static master/replica nodes (RedisStaticMasterReplicaConfiguration); relock needs the"
                        + " master, as one Redis or through Sentinel"
                : "has a " + configuration.getClass().getName() + ", which relock does not know");
    }

    private static void refuseWhatAUriCannotCarry(LettuceClientConfiguration client) {
        if (client.isUseSsl() && client.isStartTls()) {
            throw refused("asks for STARTTLS, which relock's Redis URI cannot");
        }
        if (client.isUseSsl() && client.getClientOptions().map(ClientOptions::getSslOptions)
                .filter(ssl -> ssl != ClientOptions.DEFAULT_SSL_OPTIONS).isPresent()) {
            // Lettuce's builders keep this very instance unless sslOptions(...) was given
            throw refused("has client options with SslOptions of its own (a trust store, a client certificate,"
                    + " protocols or ciphers), which relock's Redis URI cannot carry");
        }
        if (client.getRedisCredentialsProviderFactory().isPresent()) {
            throw refused("takes its credentials from a RedisCredentialsProviderFactory; relock's Redis URI carries"
                    + " a fixed username and password");
        }
    }

    private static IllegalArgumentException refused(String why) {
        return new IllegalArgumentException("The LettuceConnectionFactory " + why + "; configure the RelockClient"
                + " with RelockClient.builder() instead");
    }

    /**
     * The configuration the factory connects with. Spring Data Redis has no getter for it: the public getters of
     * host, port and database resolve it, but not the username, and {@code getStandaloneConfiguration()} returns a
     * default (localhost:6379) where the factory was made from any {@code RedisConfiguration} other than a
     * standalone one typed as such (from {@code createRedisConfiguration(url)}, a static master/replica one). So it
     * is read from the field where Spring Data Redis 3.x and 4.x keep it, set by every constructor.
     *
     * @throws IllegalArgumentException if it cannot be read, rather than connect elsewhere than the factory does
     */
    private static RedisConfiguration configurationOf(LettuceConnectionFactory factory) {
        Object configuration;
        try {
            Field field = LettuceConnectionFactory.class.getDeclaredField("configuration");
            field.setAccessible(true);
            configuration = field.get(factory);
        } catch (ReflectiveOperationException | RuntimeException e) {
            throw new IllegalArgumentException("The configuration of the LettuceConnectionFactory could not be read"
                    + " (its field 'configuration', as Spring Data Redis 3.x and 4.x keep it: " + e
                    + "); configure the RelockClient with RelockClient.builder() instead", e);
        }
        if (!(configuration instanceof RedisConfiguration redisConfiguration)) {
            throw new IllegalArgumentException("The configuration of the LettuceConnectionFactory could not be read"
                    + " (its field 'configuration' holds " + configuration + ", not a RedisConfiguration);"
                    + " configure the RelockClient with RelockClient.builder() instead");
        }
        return redisConfiguration;
    }

    private static List<String> hostsAndPorts(Set<RedisNode> nodes) {
        return nodes.stream().map(node -> RedisEndpoint.hostAndPort(node.getHost(), node.getPort())).toList();
    }

    private static String text(RedisPassword password) {
        return password.isPresent() ? new String(password.get()) : null;
    }
}
