package dev.relock.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.relock.spring.data.internal.RedisEndpoint;
import io.lettuce.core.RedisCredentials;
import io.lettuce.core.RedisURI;
import java.time.Duration;
import java.util.List;
import org.assertj.core.groups.Tuple;
import org.junit.jupiter.api.Test;
import org.springframework.mock.env.MockEnvironment;

/** How {@code spring.data.redis.*} becomes the Lettuce URI relock connects with (no Redis needed). */
class SpringDataRedisSettingsTest {

    @Test
    void defaultsAreBootsLocalhost6379Database0() {
        assertThat(uriOf()).isEqualTo("redis://localhost:6379/0");
    }

    @Test
    void hostPortCredentialsAndDatabaseSurviveLettucesParsing() {
        RedisURI uri = RedisURI.create(uriOf("host", "redis.internal", "port", "6380", "username", "app user",
                "password", "p@ss:w/rd%", "database", "7", "timeout", "2s"));
        assertThat(uri.getHost()).isEqualTo("redis.internal");
        assertThat(uri.getPort()).isEqualTo(6380);
        RedisCredentials credentials = credentialsOf(uri);
        assertThat(credentials.getUsername()).isEqualTo("app user");
        assertThat(new String(credentials.getPassword())).isEqualTo("p@ss:w/rd%");
        assertThat(uri.getDatabase()).isEqualTo(7);
        assertThat(uri.isSsl()).isFalse();
    }

    @Test
    void sslEnabledMeansRediss() {
        assertThat(uriOf("ssl.enabled", "true")).isEqualTo("rediss://localhost:6379/0");
        assertThat(uriOf("ssl.enabled", "true", "url", "redis://h:1")).isEqualTo("rediss://h:1");
        assertThat(RedisURI.create(uriOf("ssl.enabled", "true")).isSsl()).isTrue();
    }

    @Test
    void theUrlWinsOverHostAndPort() {
        assertThat(uriOf("url", "redis://:pw@h:1/4", "host", "other", "port", "2")).isEqualTo("redis://:pw@h:1/4");
    }

    @Test
    void sentinelMasterAndNodesMakeASentinelUri() {
        RedisURI uri = RedisURI.create(uriOf("sentinel.master", "mymaster", "sentinel.nodes", "s1:26379, s2:26380",
                "password", "data-pw", "database", "2"));
        assertThat(uri.getSentinelMasterId()).isEqualTo("mymaster");
        assertThat(uri.getSentinels()).extracting(RedisURI::getHost, RedisURI::getPort)
                .containsExactly(Tuple.tuple("s1", 26379),
                        Tuple.tuple("s2", 26380));
        assertThat(new String(credentialsOf(uri).getPassword())).isEqualTo("data-pw");
        assertThat(uri.getDatabase()).isEqualTo(2);
    }

    @Test
    void clusterNodesBecomeSeedUrisWithTheCredentialsAndTls() {
        RedisEndpoint endpoint = settingsOf("cluster.nodes", "a:7000, b:7001", "password", "p w",
                "ssl.enabled", "true").endpoint();
        assertThat(endpoint.isCluster()).isTrue();
        assertThat(endpoint.clusterUris()).containsExactly("rediss://:p%20w@a:7000", "rediss://:p%20w@b:7001");
        RedisURI seed = RedisURI.create(endpoint.clusterUris().get(1));
        assertThat(seed.getPort()).isEqualTo(7001);
        assertThat(new String(credentialsOf(seed).getPassword())).isEqualTo("p w");
        assertThat(settingsOf().endpoint().isCluster()).isFalse();
    }

    @Test
    void sentinelWinsOverTheUrlAsInBootAndTakesItsCredentialsAndDatabase() {
        RedisURI uri = RedisURI.create(uriOf("sentinel.master", "mymaster", "sentinel.nodes", "s1:26379",
                "url", "rediss://app:url%20pw@h:1/4", "password", "ignored", "database", "9"));
        assertThat(uri.getSentinelMasterId()).isEqualTo("mymaster");
        assertThat(uri.getSentinels()).extracting(RedisURI::getHost).containsExactly("s1");
        assertThat(credentialsOf(uri).getUsername()).isEqualTo("app");
        assertThat(new String(credentialsOf(uri).getPassword())).isEqualTo("url pw");
        assertThat(uri.getDatabase()).isEqualTo(4);
        assertThat(uri.isSsl()).as("a rediss url").isTrue();
    }

    @Test
    void clusterWinsOverTheUrlAsInBootAndTakesItsCredentials() {
        RedisEndpoint endpoint = settingsOf("cluster.nodes", "a:7000", "url", "redis://url-pw@h:1/4",
                "password", "ignored").endpoint();
        assertThat(endpoint.clusterUris()).containsExactly("redis://:url-pw@a:7000");
    }

    @Test
    void sentinelWinsOverClusterAsInBoot() {
        RedisEndpoint endpoint = settingsOf("sentinel.master", "mymaster", "sentinel.nodes", "s1:26379",
                "cluster.nodes", "a:7000").endpoint();
        assertThat(endpoint.isCluster()).isFalse();
        assertThat(endpoint.describe()).isEqualTo("Sentinel master 'mymaster' via s1:26379 (database 0)");
    }

    @Test
    void aUrlThatSentinelOrClusterCannotReadFailsNamingIt() {
        assertThatThrownBy(() -> settingsOf("cluster.nodes", "a:7000", "url", "redis://h:1/x").endpoint())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("spring.data.redis.url names database 'x'");
        assertThatThrownBy(() -> settingsOf("cluster.nodes", "a:7000", "url", "redis://h:1/{bad}").endpoint())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("spring.data.redis.url is not a URI");
    }

    @Test
    void settingsRelockCannotFollowFailNamingTheProperty() {
        assertThatThrownBy(() -> uriOf("sentinel.master", "m"))
                .hasMessageContaining("spring.data.redis.sentinel.nodes is empty");
        assertThatThrownBy(() -> uriOf("sentinel.master", "m", "sentinel.nodes", "s:1", "sentinel.password", "x"))
                .hasMessageContaining("spring.data.redis.sentinel.username/password");
        assertThatThrownBy(() -> uriOf("ssl.bundle", "corp"))
                .hasMessageContaining("spring.data.redis.ssl.bundle");
    }

    @Test
    void bindsBootsDurationAndListFormats() {
        SpringDataRedisSettings settings = settingsOf("timeout", "1500ms", "sentinel.nodes[0]", "a:1",
                "sentinel.nodes[1]", "b:2");
        assertThat(settings.timeout()).isEqualTo(Duration.ofMillis(1500));
        assertThat(settings.sentinel().nodes()).isEqualTo(List.of("a:1", "b:2"));
    }

    /** Through the credentials provider, which Lettuce 6 and 7 both have (7 dropped getPassword()). */
    private static RedisCredentials credentialsOf(RedisURI uri) {
        return uri.getCredentialsProvider().resolveCredentials().block();
    }

    private static String uriOf(String... keysAndValues) {
        return settingsOf(keysAndValues).endpoint().redisUri();
    }

    private static SpringDataRedisSettings settingsOf(String... keysAndValues) {
        MockEnvironment environment = new MockEnvironment();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            environment.setProperty("spring.data.redis." + keysAndValues[i], keysAndValues[i + 1]);
        }
        return SpringDataRedisSettings.bind(environment);
    }
}
