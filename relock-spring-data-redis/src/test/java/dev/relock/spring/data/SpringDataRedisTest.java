package dev.relock.spring.data;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.relock.LockHandle;
import dev.relock.RelockClient;
import dev.relock.spring.data.internal.RedisEndpoint;
import dev.relock.testredis.RedisCluster;
import dev.relock.testredis.RedisSentinelGroup;
import dev.relock.testredis.RedisServer;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SslOptions;
import io.lettuce.core.SslVerifyMode;
import io.lettuce.core.cluster.ClusterClientOptions;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisPassword;
import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.RedisSocketConfiguration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.RedisStaticMasterReplicaConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.connection.lettuce.RedisCredentialsProviderFactory;

/**
 * What relock reads from a LettuceConnectionFactory: the endpoint of each configuration (no Redis needed), what it
 * refuses, and clients that connect to the fixture's servers as the factory says (standalone with an ACL user,
 * Sentinel, Cluster). Factories are never started: relock reads their configuration only.
 */
@Tag("redis")
class SpringDataRedisTest {

    @Test
    void aStandaloneConfigurationGivesHostPortCredentialsDatabaseAndTls() {
        RedisStandaloneConfiguration standalone = new RedisStandaloneConfiguration("redis.internal", 6380);
        standalone.setUsername("app");
        standalone.setPassword("p w");
        standalone.setDatabase(5);
        LettuceClientConfiguration tls = LettuceClientConfiguration.builder().useSsl().disablePeerVerification().build();

        RedisURI uri = RedisURI.create(SpringDataRedis.endpointOf(new LettuceConnectionFactory(standalone, tls)).redisUri());

        assertThat(uri.getHost()).isEqualTo("redis.internal");
        assertThat(uri.getPort()).isEqualTo(6380);
        assertThat(uri.getDatabase()).isEqualTo(5);
        assertThat(uri.isSsl()).isTrue();
        assertThat(uri.getVerifyMode()).isEqualTo(SslVerifyMode.NONE);
        var credentials = uri.getCredentialsProvider().resolveCredentials().block();
        assertThat(credentials.getUsername()).isEqualTo("app");
        assertThat(new String(credentials.getPassword())).isEqualTo("p w");
    }

    @Test
    void aFactoryWithoutConfigurationIsBootsLocalhost6379WithoutTls() {
        assertThat(SpringDataRedis.endpointOf(new LettuceConnectionFactory()).redisUri()).isEqualTo("redis://localhost:6379/0");
    }

    @Test
    void aSentinelConfigurationGivesTheMasterTheSentinelsAndTheDataNodesCredentials() {
        RedisSentinelConfiguration sentinel = new RedisSentinelConfiguration("orders", Set.of("s1:26379"));
        sentinel.setPassword(RedisPassword.of("data-pw"));
        sentinel.setDatabase(2);

        RedisEndpoint endpoint = SpringDataRedis.endpointOf(new LettuceConnectionFactory(sentinel));

        RedisURI uri = RedisURI.create(endpoint.redisUri());
        assertThat(uri.getSentinelMasterId()).isEqualTo("orders");
        assertThat(new String(uri.getCredentialsProvider().resolveCredentials().block().getPassword()))
                .isEqualTo("data-pw");
        assertThat(endpoint.describe()).isEqualTo("Sentinel master 'orders' via s1:26379 (database 2)");
    }

    @Test
    void aClusterConfigurationGivesSeedUrisWithCredentialsAndTls() {
        RedisClusterConfiguration cluster = new RedisClusterConfiguration(List.of("a:7000"));
        cluster.setPassword("pw");
        LettuceClientConfiguration tls = LettuceClientConfiguration.builder().useSsl().build();

        RedisEndpoint endpoint = SpringDataRedis.endpointOf(new LettuceConnectionFactory(cluster, tls));

        assertThat(endpoint.isCluster()).isTrue();
        assertThat(endpoint.clusterUris()).containsExactly("rediss://:pw@a:7000");
    }

    @Test
    void whatRelockCannotFollowIsRefusedNamingIt() {
        assertThatThrownBy(() -> SpringDataRedis.clientBuilder(new JedisConnectionFactory()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("LettuceConnectionFactory only, not of a " + JedisConnectionFactory.class.getName());
        assertThatThrownBy(() -> SpringDataRedis.clientBuilder(
                new LettuceConnectionFactory(new RedisSocketConfiguration("/tmp/redis.sock"))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("RedisSocketConfiguration");
        assertThatThrownBy(() -> SpringDataRedis.clientBuilder(new LettuceConnectionFactory(
                new RedisStaticMasterReplicaConfiguration("primary", 6379), LettuceClientConfiguration.defaultConfiguration())))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("RedisStaticMasterReplicaConfiguration");
        assertThatThrownBy(() -> SpringDataRedis.clientBuilder(new LettuceConnectionFactory(new RedisStandaloneConfiguration(),
                LettuceClientConfiguration.builder().useSsl().startTls().build())))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("STARTTLS");
        assertThatThrownBy(() -> SpringDataRedis.clientBuilder(new LettuceConnectionFactory(new RedisStandaloneConfiguration(),
                LettuceClientConfiguration.builder().redisCredentialsProviderFactory(new RedisCredentialsProviderFactory() {})
                        .build())))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("RedisCredentialsProviderFactory");
        RedisSentinelConfiguration sentinelWithPassword = new RedisSentinelConfiguration("m", Set.of("s:1"));
        sentinelWithPassword.setSentinelPassword("sentinel-pw");
        assertThatThrownBy(() -> SpringDataRedis.clientBuilder(new LettuceConnectionFactory(sentinelWithPassword)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("password for the Sentinels");
        assertThatThrownBy(() -> SpringDataRedis.clientBuilder(null)).isInstanceOf(NullPointerException.class);
    }

    @Test
    void aConfigurationFromAUrlIsTheOneReadNotTheFactorysDefaultStandaloneOne() {
        RedisEndpoint endpoint = SpringDataRedis.endpointOf(new LettuceConnectionFactory(
                LettuceConnectionFactory.createRedisConfiguration("redis://app:p%20w@redis.internal:6380/3")));

        RedisURI uri = RedisURI.create(endpoint.redisUri());
        assertThat(RedisEndpoint.hostAndPort(uri.getHost(), uri.getPort())).isEqualTo("redis.internal:6380");
        assertThat(uri.getDatabase()).isEqualTo(3);
        var credentials = uri.getCredentialsProvider().resolveCredentials().block();
        assertThat(credentials.getUsername()).isEqualTo("app");
        assertThat(new String(credentials.getPassword())).isEqualTo("p w");
        RedisEndpoint sentinel = SpringDataRedis.endpointOf(new LettuceConnectionFactory(
                LettuceConnectionFactory.createRedisConfiguration("redis-sentinel://s1:26379/2?sentinelMasterId=orders")));
        assertThat(sentinel.describe()).isEqualTo("Sentinel master 'orders' via s1:26379 (database 2)");
    }

    @Test
    void tlsWithSslOptionsOfItsOwnIsRefusedAndWithLettucesDefaultIsNot() {
        ClientOptions trustStoreOfItsOwn = ClientOptions.builder()
                .sslOptions(SslOptions.builder().protocols("TLSv1.3").build()).build();
        assertThatThrownBy(() -> SpringDataRedis.clientBuilder(new LettuceConnectionFactory(new RedisStandaloneConfiguration(),
                LettuceClientConfiguration.builder().useSsl().and().clientOptions(trustStoreOfItsOwn).build())))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("SslOptions of its own");
        assertThatThrownBy(() -> SpringDataRedis.clientBuilder(new LettuceConnectionFactory(
                new RedisClusterConfiguration(List.of("a:7000")), LettuceClientConfiguration.builder().useSsl().and()
                        .clientOptions(ClusterClientOptions.builder(trustStoreOfItsOwn).build()).build())))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("SslOptions of its own");

        LettuceClientConfiguration defaultSsl = LettuceClientConfiguration.builder().useSsl().and()
                .clientOptions(ClientOptions.builder().autoReconnect(false).build()).build();
        assertThat(SpringDataRedis.endpointOf(new LettuceConnectionFactory(new RedisStandaloneConfiguration(), defaultSsl))
                .redisUri()).startsWith("rediss://");
        LettuceClientConfiguration noTls = LettuceClientConfiguration.builder().clientOptions(trustStoreOfItsOwn).build();
        assertThat(SpringDataRedis.endpointOf(new LettuceConnectionFactory(new RedisStandaloneConfiguration(), noTls))
                .redisUri()).as("SslOptions without TLS are not used").startsWith("redis://");
    }

    @Test
    void aClientLocksOnTheServerOfAFactoryMadeFromAUrl() {
        try (RedisServer redis = RedisServer.builder().password("url-pw").start()) {
            LettuceConnectionFactory factory = new LettuceConnectionFactory(LettuceConnectionFactory.createRedisConfiguration(
                    "redis://:url-pw@" + RedisEndpoint.hostAndPort(redis.host(), redis.port()) + "/3"));
            // checked before a client connects: a wrong mapping would lock on localhost:6379, which is not the fixture's
            assertThat(SpringDataRedis.endpointOf(factory).describe())
                    .isEqualTo("redis://" + RedisEndpoint.hostAndPort(redis.host(), redis.port()) + "/3");

            try (RelockClient client = SpringDataRedis.clientBuilder(factory).build();
                    LockHandle held = client.lock("from-url").acquire()) {
                assertThat(redis.execute("INFO", "keyspace")).as("relock's keys, in database 3 only")
                        .contains("db3:keys=").doesNotContain("db0:");
            }
        }
    }

    @Test
    void aClientConnectsAsAnAclUserToTheFactorysDatabase() {
        try (RedisServer redis = RedisServer.start()) {
            redis.execute("ACL", "SETUSER", "locker", "on", ">locker-pw", "~*", "&*", "+@all");
            RedisStandaloneConfiguration standalone = new RedisStandaloneConfiguration(redis.host(), redis.port());
            standalone.setUsername("locker");
            standalone.setPassword("locker-pw");
            standalone.setDatabase(3);

            try (RelockClient client = SpringDataRedis.clientBuilder(new LettuceConnectionFactory(standalone))
                    .keyPrefix("app").build();
                    LockHandle held = client.lock("report").acquire()) {
                assertThat(client.inspect("report").isHeld()).isTrue();
                assertThat(client.settings().commandTimeout()).as("relock's, not the factory's 60 s")
                        .isEqualTo(Duration.ofSeconds(3));
                List<String> relocksConnections = redis.execute("CLIENT", "LIST").lines()
                        .filter(connection -> connection.contains(" name=" + client.identity().connectionName() + " "))
                        .toList();
                assertThat(relocksConnections).isNotEmpty()
                        .allSatisfy(connection -> assertThat(connection).contains(" db=3 ").contains(" user=locker "));
            }
        }
    }

    @Test
    void aClientFindsTheMasterThroughTheFactorysSentinels() {
        try (RedisSentinelGroup group = RedisSentinelGroup.start()) {
            RedisSentinelConfiguration sentinel = new RedisSentinelConfiguration();
            sentinel.master(group.masterName());
            group.sentinels().forEach(node -> sentinel.sentinel(node.host(), node.port()));

            try (RelockClient client = SpringDataRedis.clientBuilder(new LettuceConnectionFactory(sentinel)).build();
                    LockHandle held = client.lock("sentinel").acquire()) {
                assertThat(group.master().execute("EXISTS", "relock:{sentinel}")).isEqualTo("1");
            }
        }
    }

    @Test
    void aClientLocksAcrossTheFactorysCluster() {
        try (RedisCluster cluster = RedisCluster.builder().masters(3).start()) {
            RedisClusterConfiguration configuration = new RedisClusterConfiguration(
                    List.of(RedisEndpoint.hostAndPort(cluster.nodes().get(0).host(), cluster.nodes().get(0).port())));

            try (RelockClient client = SpringDataRedis.clientBuilder(new LettuceConnectionFactory(configuration)).build()) {
                for (String name : List.of("cluster:a", "cluster:b", "cluster:c", "cluster:d")) {
                    try (LockHandle held = client.lock(name).acquire()) {
                        assertThat(cluster.masterFor("relock:{" + name + "}").execute("EXISTS", "relock:{" + name + "}"))
                                .as(name).isEqualTo("1");
                    }
                }
            }
        }
    }
}
