package dev.relock.spring.boot;

import io.lettuce.core.RedisURI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
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
     * The Lettuce URI of these settings when they do not name a cluster: {@code url} if set (made {@code rediss://} by
     * {@code ssl.enabled}), else {@code redis-sentinel://} when a sentinel master is set, else
     * {@code redis://} (or {@code rediss://}) with host, port, credentials and database.
     *
     * @throws IllegalStateException for settings relock cannot follow, naming the property
     */
    String redisUri() {
        checkSsl();
        boolean tls = tls();
        if (url != null && !url.isBlank()) {
            return tls && url.startsWith("redis://") ? "rediss://" + url.substring("redis://".length()) : url;
        }
        if (sentinel != null && sentinel.master() != null && !sentinel.master().isBlank()) {
            return sentinelUri(tls);
        }
        String hostAndPort = bracketed(host == null ? "localhost" : host) + ":" + (port == null ? 6379 : port);
        return (tls ? "rediss://" : "redis://") + credentials() + hostAndPort + "/" + databaseNumber();
    }

    /** Where these settings point, without credentials, for the log: a Redis, a Sentinel master, or Cluster nodes. */
    String describe() {
        if (isCluster()) {
            return "Redis Cluster nodes " + String.join(",", cluster.nodes().stream().map(String::trim).toList());
        }
        RedisURI uri = RedisURI.create(redisUri());
        if (!uri.getSentinels().isEmpty()) {
            return "Sentinel master '" + uri.getSentinelMasterId() + "' via " + String.join(",", uri.getSentinels()
                    .stream().map(sentinel -> sentinel.getHost() + ":" + sentinel.getPort()).toList())
                    + " (database " + uri.getDatabase() + ")";
        }
        return (uri.isSsl() ? "rediss://" : "redis://") + bracketed(uri.getHost()) + ":" + uri.getPort() + "/"
                + uri.getDatabase();
    }

    /** Whether {@code cluster.nodes} is set: relock then connects to a Redis Cluster. */
    boolean isCluster() {
        return cluster != null && cluster.nodes() != null && !cluster.nodes().isEmpty();
    }

    /**
     * The Lettuce URIs of the {@code cluster.nodes} ({@code host:port} each), with the credentials
     * and {@code ssl.enabled} of these settings; relock learns the rest of the cluster from them.
     *
     * @throws IllegalStateException for settings relock cannot follow, naming the property
     */
    List<String> clusterUris() {
        checkSsl();
        String scheme = tls() ? "rediss://" : "redis://";
        return cluster.nodes().stream().map(String::trim).map(node -> scheme + credentials() + node).toList();
    }

    private boolean tls() {
        return ssl != null && Boolean.TRUE.equals(ssl.enabled());
    }

    private void checkSsl() {
        if (ssl != null && ssl.bundle() != null && !ssl.bundle().isBlank()) {
            throw new IllegalStateException(PREFIX + ".ssl.bundle is set, but relock cannot apply SSL bundles; "
                    + "declare a Lettuce RedisClient bean configured with it, which relock then uses");
        }
    }

    private String sentinelUri(boolean tls) {
        if (sentinel.nodes() == null || sentinel.nodes().isEmpty()) {
            throw new IllegalStateException(PREFIX + ".sentinel.master is set but " + PREFIX + ".sentinel.nodes is empty");
        }
        if (sentinel.password() != null || sentinel.username() != null) {
            // a Lettuce URI carries one set of credentials, which Lettuce gives the data nodes only
            throw new IllegalStateException(PREFIX + ".sentinel.username/password are set, but relock's Redis URI "
                    + "cannot carry credentials for the sentinels; declare a Lettuce RedisClient bean "
                    + "(RedisURI.Builder.withSentinel with credentials), which relock then uses");
        }
        String nodes = String.join(",", sentinel.nodes().stream().map(String::trim).toList());
        return (tls ? "rediss-sentinel://" : "redis-sentinel://") + credentials() + nodes + "/" + databaseNumber()
                + "?sentinelMasterId=" + percentEncoded(sentinel.master());
    }

    private int databaseNumber() {
        return database == null ? 0 : database;
    }

    /** {@code user:password@}, {@code :password@}, or nothing: a user without a password cannot log in. */
    private String credentials() {
        if (password == null || password.isEmpty()) {
            return "";
        }
        String user = username == null ? "" : percentEncoded(username);
        return user + ":" + percentEncoded(password) + "@";
    }

    private static String bracketed(String host) {
        return host.indexOf(':') >= 0 && !host.startsWith("[") ? "[" + host + "]" : host;
    }

    /** Percent-encoded for a URI's user part (URLEncoder's '+' for a space would be read as a plus). */
    static String percentEncoded(String text) {
        return URLEncoder.encode(text, StandardCharsets.UTF_8).replace("+", "%20");
    }
}
