package dev.relock.spring.boot;

import dev.relock.spring.data.internal.RedisEndpoint;
import io.lettuce.core.SslVerifyMode;
import java.time.Duration;
import java.util.List;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.env.Environment;

/**
 * The {@code spring.data.redis.*} properties relock connects with, read through the
 * {@link Binder} rather than Boot's own {@code RedisProperties}, whose package differs between
 * Boot 3 and 4. Unset values are null; Boot's defaults (localhost, 6379, database 0) apply.
 */
record SpringDataRedisSettings(String url, String host, Integer port, String username, String password,
        Integer database, Duration timeout, Ssl ssl, Sentinel sentinel, Cluster cluster) {

    static final String PREFIX = "spring.data.redis";

    /** {@code spring.data.redis.ssl.*} */
    record Ssl(Boolean enabled, String bundle) {}

    /** {@code spring.data.redis.sentinel.*} */
    record Sentinel(String master, List<String> nodes, String username, String password) {}

    /** {@code spring.data.redis.cluster.*} */
    record Cluster(List<String> nodes) {}

    static SpringDataRedisSettings bind(Environment environment) {
        return Binder.get(environment).bind(PREFIX, SpringDataRedisSettings.class)
                .orElseGet(() -> new SpringDataRedisSettings(null, null, null, null, null, null, null, null, null, null));
    }

    /**
     * Where these settings point: the {@code cluster.nodes} when set, else {@code url} if set (made {@code rediss://}
     * by {@code ssl.enabled}), else a Sentinel master when {@code sentinel.master} is set, else host and port; each
     * with the credentials, database and {@code ssl.enabled} of these settings (a cluster has no database).
     *
     * @throws IllegalStateException for settings relock cannot follow, naming the property
     */
    RedisEndpoint endpoint() {
        checkSsl();
        boolean tls = ssl != null && Boolean.TRUE.equals(ssl.enabled());
        RedisEndpoint.Builder endpoint = RedisEndpoint.builder().credentials(username, password)
                .database(database == null ? 0 : database).tls(tls ? SslVerifyMode.FULL : null);
        if (cluster != null && cluster.nodes() != null && !cluster.nodes().isEmpty()) {
            return endpoint.cluster(cluster.nodes());
        }
        if (url != null && !url.isBlank()) {
            boolean upgrade = tls && url.startsWith("redis://");
            return RedisEndpoint.ofUri(upgrade ? "rediss://" + url.substring("redis://".length()) : url);
        }
        if (sentinel != null && sentinel.master() != null && !sentinel.master().isBlank()) {
            checkSentinel();
            return endpoint.sentinel(sentinel.master(), sentinel.nodes());
        }
        return endpoint.standalone(host == null ? "localhost" : host, port == null ? 6379 : port);
    }

    private void checkSsl() {
        if (ssl != null && ssl.bundle() != null && !ssl.bundle().isBlank()) {
            throw new IllegalStateException(PREFIX + ".ssl.bundle is set, but relock cannot apply SSL bundles; "
                    + "declare a Lettuce RedisClient bean configured with it, which relock then uses");
        }
    }

    private void checkSentinel() {
        if (sentinel.nodes() == null || sentinel.nodes().isEmpty()) {
            throw new IllegalStateException(PREFIX + ".sentinel.master is set but " + PREFIX
                    + ".sentinel.nodes is empty");
        }
        if (sentinel.password() != null || sentinel.username() != null) {
            // a Lettuce URI carries one set of credentials, which Lettuce gives the data nodes only
            throw new IllegalStateException(PREFIX + ".sentinel.username/password are set, but relock's Redis URI "
                    + "cannot carry credentials for the sentinels; declare a Lettuce RedisClient bean "
                    + "(RedisURI.Builder.withSentinel with credentials), which relock then uses");
        }
    }
}
