package dev.relock.spring.data.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.RedisCredentials;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SslVerifyMode;
import java.util.List;
import org.assertj.core.groups.Tuple;
import org.junit.jupiter.api.Test;

/** The Lettuce URIs an endpoint writes, read back by Lettuce's own parser (no Redis needed). */
class RedisEndpointTest {

    @Test
    void aStandaloneUriCarriesHostPortCredentialsAndDatabase() {
        RedisEndpoint endpoint = RedisEndpoint.builder().credentials("app user", "p@ss:w/rd% +").database(7)
                .standalone("redis.internal", 6380);

        RedisURI uri = RedisURI.create(endpoint.redisUri());
        assertThat(uri.getHost()).isEqualTo("redis.internal");
        assertThat(uri.getPort()).isEqualTo(6380);
        assertThat(uri.getDatabase()).isEqualTo(7);
        assertThat(uri.isSsl()).isFalse();
        RedisCredentials credentials = credentialsOf(uri);
        assertThat(credentials.getUsername()).isEqualTo("app user");
        assertThat(new String(credentials.getPassword())).isEqualTo("p@ss:w/rd% +");
        assertThat(endpoint.isCluster()).isFalse();
        assertThat(endpoint.clusterUris()).isEmpty();
    }

    @Test
    void noPasswordMeansNoCredentialsEvenWithAUser() {
        assertThat(RedisEndpoint.builder().credentials("user", null).standalone("h", 1).redisUri())
                .isEqualTo("redis://h:1/0");
        assertThat(RedisEndpoint.builder().credentials(null, "pw").standalone("h", 1).redisUri())
                .isEqualTo("redis://:pw@h:1/0");
    }

    @Test
    void tlsIsRedissAndAVerificationOtherThanFullIsAQueryParameter() {
        RedisURI full = RedisURI.create(RedisEndpoint.builder().tls(SslVerifyMode.FULL).standalone("h", 1).redisUri());
        assertThat(full.isSsl()).isTrue();
        assertThat(full.getVerifyMode()).isEqualTo(SslVerifyMode.FULL);

        RedisURI none = RedisURI.create(RedisEndpoint.builder().tls(SslVerifyMode.NONE).standalone("h", 1).redisUri());
        assertThat(none.isSsl()).isTrue();
        assertThat(none.getVerifyMode()).isEqualTo(SslVerifyMode.NONE);
    }

    @Test
    void anIpv6HostIsBracketed() {
        RedisURI uri = RedisURI.create(RedisEndpoint.builder().standalone("::1", 6380).redisUri());
        assertThat(uri.getHost()).isEqualTo("[::1]");
        assertThat(uri.getPort()).isEqualTo(6380);
        assertThat(RedisEndpoint.hostAndPort("[::1]", 1)).isEqualTo("[::1]:1");
    }

    @Test
    void aSentinelUriNamesTheMasterAndTheSentinels() {
        RedisEndpoint endpoint = RedisEndpoint.builder().credentials(null, "data-pw").database(2)
                .tls(SslVerifyMode.CA).sentinel("my master", List.of("s1:26379", " s2:26380 "));

        RedisURI uri = RedisURI.create(endpoint.redisUri());
        assertThat(uri.getSentinelMasterId()).isEqualTo("my master");
        assertThat(uri.getSentinels()).extracting(RedisURI::getHost, RedisURI::getPort)
                .containsExactly(Tuple.tuple("s1", 26379), Tuple.tuple("s2", 26380));
        assertThat(new String(credentialsOf(uri).getPassword())).isEqualTo("data-pw");
        assertThat(uri.getDatabase()).isEqualTo(2);
        assertThat(uri.isSsl()).isTrue();
        assertThat(uri.getVerifyMode()).isEqualTo(SslVerifyMode.CA);
        assertThat(endpoint.describe()).isEqualTo("Sentinel master 'my master' via s1:26379,s2:26380 (database 2)");
    }

    @Test
    void aClusterHasSeedUrisWithTheCredentialsAndTlsButNoDatabase() {
        RedisEndpoint endpoint = RedisEndpoint.builder().credentials("u", "p w").tls(SslVerifyMode.FULL).database(3)
                .cluster(List.of("a:7000", " b:7001"));

        assertThat(endpoint.isCluster()).isTrue();
        assertThat(endpoint.clusterUris()).containsExactly("rediss://u:p%20w@a:7000", "rediss://u:p%20w@b:7001");
        assertThat(endpoint.describe()).isEqualTo("Redis Cluster nodes a:7000,b:7001");
        assertThatThrownBy(endpoint::redisUri).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("Redis Cluster nodes a:7000,b:7001");
    }

    @Test
    void theDescriptionLeavesTheCredentialsOut() {
        RedisEndpoint endpoint = RedisEndpoint.builder().credentials("user", "secret").database(4)
                .tls(SslVerifyMode.NONE).standalone("h", 1);
        assertThat(endpoint.describe()).isEqualTo("rediss://h:1/4");
        assertThat(endpoint.toString()).doesNotContain("secret");
        assertThat(RedisEndpoint.ofUri("redis://:secret@h:2/1").describe()).isEqualTo("redis://h:2/1");
    }

    @Test
    void badArgumentsAreRefusedNamingWhatIsWrong() {
        assertThatThrownBy(() -> RedisEndpoint.builder().cluster(List.of()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least one node");
        assertThatThrownBy(() -> RedisEndpoint.builder().sentinel("m", List.of()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("Sentinel endpoint");
        assertThatThrownBy(() -> RedisEndpoint.builder().database(-1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("-1");
    }

    /** Through the credentials provider, which Lettuce 6 and 7 both have (7 dropped getPassword()). */
    private static RedisCredentials credentialsOf(RedisURI uri) {
        return uri.getCredentialsProvider().resolveCredentials().block();
    }
}
