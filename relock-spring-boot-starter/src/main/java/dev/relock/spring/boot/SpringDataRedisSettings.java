package dev.relock.spring.boot;

import dev.relock.spring.data.internal.RedisEndpoint;
import io.lettuce.core.SslVerifyMode;
import java.net.URI;
import java.net.URISyntaxException;
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
     * Where these settings point, in the order Spring Boot's own Lettuce connection factory follows: a Sentinel
     * master when {@code sentinel.master} is set, else the {@code cluster.nodes} when set, else {@code url} if set
     * (made {@code rediss://} by {@code ssl.enabled}), else host and port. Credentials and database are, as in Boot,
     * the {@code url}'s when it is set (a Sentinel master or a cluster then takes them from it), else
     * {@code username}, {@code password} and {@code database}; TLS is {@code ssl.enabled} or a {@code rediss://}
     * url. A cluster has no database.
     *
     * @throws IllegalStateException for settings relock cannot follow, naming the property
     */
    RedisEndpoint endpoint() {
        checkSsl();
        boolean hasUrl = url != null && !url.isBlank();
        boolean tls = ssl != null && Boolean.TRUE.equals(ssl.enabled());
        if (sentinel != null && sentinel.master() != null && !sentinel.master().isBlank()) {
            checkSentinel();
            return credentialsAndDatabase(hasUrl, tls).sentinel(sentinel.master(), sentinel.nodes());
        }
        if (cluster != null && cluster.nodes() != null && !cluster.nodes().isEmpty()) {
            return credentialsAndDatabase(hasUrl, tls).cluster(cluster.nodes());
        }
        if (hasUrl) {
            boolean upgrade = tls && url.startsWith("redis://");
            return RedisEndpoint.ofUri(upgrade ? "rediss://" + url.substring("redis://".length()) : url);
        }
        return credentialsAndDatabase(false, tls).standalone(host == null ? "localhost" : host,
                port == null ? 6379 : port);
    }

    /**
     * The credentials, database and TLS of these settings, for Sentinel, cluster or host and port; from the url's
     * user info ({@code user:password}, or a password alone) and path ({@code /database}) where {@code fromUrl}.
     */
    private RedisEndpoint.Builder credentialsAndDatabase(boolean fromUrl, boolean tls) {
        if (!fromUrl) {
            return RedisEndpoint.builder().credentials(username, password).database(database == null ? 0 : database)
                    .tls(tls ? SslVerifyMode.FULL : null);
        }
        URI parsed;
        try {
            parsed = new URI(url);
        } catch (URISyntaxException e) {
            throw new IllegalStateException(PREFIX + ".url is not a URI: " + e.getMessage(), e);
        }
        String userInfo = parsed.getUserInfo();
        int colon = userInfo == null ? -1 : userInfo.indexOf(':');
        String path = parsed.getPath() == null ? "" : parsed.getPath();
        String databaseInPath = path.startsWith("/") ? path.substring(1) : path;
        int urlDatabase;
        try {
            urlDatabase = databaseInPath.isEmpty() ? 0 : Integer.parseInt(databaseInPath);
        } catch (NumberFormatException e) {
            throw new IllegalStateException(PREFIX + ".url names database '" + databaseInPath + "', not a number", e);
        }
        return RedisEndpoint.builder()
                .credentials(colon < 0 ? null : userInfo.substring(0, colon),
                        colon < 0 ? userInfo : userInfo.substring(colon + 1))
                .database(urlDatabase)
                .tls(tls || "rediss".equals(parsed.getScheme()) ? SslVerifyMode.FULL : null);
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
