package dev.relock.spring.data.internal;

import dev.relock.RelockClientBuilder;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SslVerifyMode;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Objects;

/**
 * Where a relock client connects, as the Lettuce URIs {@link RelockClientBuilder} takes: one Redis, a Sentinel
 * master, or the seed nodes of a Redis Cluster, each with the credentials, TLS and database to use. relock's Spring
 * modules build one from what they read (a Spring Data Redis connection factory, Spring Boot's
 * {@code spring.data.redis.*} properties); each refuses, in its own terms, what a URI cannot carry before it builds
 * one, so this class writes URIs and checks nothing but its arguments.
 *
 * <p>Not API: public only so that relock's modules share it. Immutable; its URIs may carry a password, so
 * {@link #describe()} is the text to log.
 */
public final class RedisEndpoint {

    /** A URI (one Redis or a Sentinel master), or null for a cluster. */
    private final String redisUri;
    /** The seed URIs of a cluster, or empty. */
    private final List<String> clusterUris;

    private RedisEndpoint(String redisUri, List<String> clusterUris) {
        this.redisUri = redisUri;
        this.clusterUris = clusterUris;
    }

    /** An endpoint given as a Lettuce URI, such as {@code redis://}, {@code rediss://} or {@code redis-sentinel://}. */
    public static RedisEndpoint ofUri(String redisUri) {
        Objects.requireNonNull(redisUri, "redisUri");
        return new RedisEndpoint(redisUri, List.of());
    }

    /** Credentials, TLS and database default to none, off and 0; a terminal method then names the servers. */
    public static Builder builder() {
        return new Builder();
    }

    /** Whether this is a Redis Cluster: it then has {@link #clusterUris()}, and no {@link #redisUri()}. */
    public boolean isCluster() {
        return redisUri == null;
    }

    /**
     * The URI of one Redis or of a Sentinel master.
     *
     * @throws IllegalStateException if this is a cluster
     */
    public String redisUri() {
        if (isCluster()) {
            throw new IllegalStateException("a Redis Cluster has seed URIs, not one URI: " + describe());
        }
        return redisUri;
    }

    /** The URIs of a cluster's seed nodes; empty unless {@link #isCluster()}. */
    public List<String> clusterUris() {
        return clusterUris;
    }

    /** Sets where {@code builder} connects (its {@code redisUri} or {@code redisClusterUris}) and returns it. */
    public RelockClientBuilder applyTo(RelockClientBuilder builder) {
        return isCluster() ? builder.redisClusterUris(clusterUris.toArray(String[]::new)) : builder.redisUri(redisUri);
    }

    /** Where this points, without credentials, for the log: a Redis, a Sentinel master, or cluster nodes. */
    public String describe() {
        if (isCluster()) {
            return "Redis Cluster nodes " + String.join(",", clusterUris.stream().map(RedisURI::create)
                    .map(seed -> hostAndPort(seed.getHost(), seed.getPort())).toList());
        }
        RedisURI uri = RedisURI.create(redisUri);
        if (uri.getSocket() != null) {
            return "Unix socket " + uri.getSocket() + " (database " + uri.getDatabase() + ")";
        }
        if (!uri.getSentinels().isEmpty()) {
            return "Sentinel master '" + uri.getSentinelMasterId() + "' via " + String.join(",", uri.getSentinels()
                    .stream().map(sentinel -> hostAndPort(sentinel.getHost(), sentinel.getPort())).toList())
                    + " (database " + uri.getDatabase() + ")";
        }
        return (uri.isSsl() ? "rediss://" : "redis://") + hostAndPort(uri.getHost(), uri.getPort()) + "/"
                + uri.getDatabase();
    }

    @Override
    public String toString() {
        return "RedisEndpoint{" + describe() + "}";
    }

    /** {@code host:port}, an IPv6 host in brackets. */
    public static String hostAndPort(String host, int port) {
        return (host.indexOf(':') >= 0 && !host.startsWith("[") ? "[" + host + "]" : host) + ":" + port;
    }

    /**
     * The parts of a URI other than the servers. Not thread-safe; each terminal method ({@link #standalone},
     * {@link #sentinel}, {@link #cluster}) returns a new endpoint.
     */
    public static final class Builder {

        private String username;
        private String password;
        private int database;
        private SslVerifyMode tls;

        private Builder() {}

        /**
         * The user and password that log in to the data nodes; a null or empty password means none (a user without
         * one cannot log in), a null user the default user.
         */
        public Builder credentials(String username, String password) {
            this.username = username;
            this.password = password;
            return this;
        }

        /** The database number; ignored by a cluster, which has only database 0. */
        public Builder database(int database) {
            if (database < 0) {
                throw new IllegalArgumentException("database must not be negative, was " + database);
            }
            this.database = database;
            return this;
        }

        /** TLS, checking the server's certificate as {@code verifyPeer} says; null turns TLS off. */
        public Builder tls(SslVerifyMode verifyPeer) {
            this.tls = verifyPeer;
            return this;
        }

        /** One Redis at {@code host} (a name, an IPv4 or an IPv6 address) and {@code port}. */
        public RedisEndpoint standalone(String host, int port) {
            Objects.requireNonNull(host, "host");
            return new RedisEndpoint(scheme("redis", "rediss") + credentials() + hostAndPort(host, port) + "/"
                    + database + query(null), List.of());
        }

        /**
         * The master named {@code masterName}, found through the Sentinels at {@code nodes} ({@code host:port} each).
         *
         * @throws IllegalArgumentException if nodes is empty
         */
        public RedisEndpoint sentinel(String masterName, List<String> nodes) {
            Objects.requireNonNull(masterName, "masterName");
            String sentinels = String.join(",", trimmed(nodes, "Sentinel"));
            return new RedisEndpoint(scheme("redis-sentinel", "rediss-sentinel") + credentials() + sentinels + "/"
                    + database + query("sentinelMasterId=" + percentEncoded(masterName)), List.of());
        }

        /**
         * A Redis Cluster, by some of its nodes ({@code host:port} each); relock learns the rest from them.
         *
         * @throws IllegalArgumentException if nodes is empty
         */
        public RedisEndpoint cluster(List<String> nodes) {
            String prefix = scheme("redis", "rediss") + credentials();
            return new RedisEndpoint(null, trimmed(nodes, "cluster").stream()
                    .map(node -> prefix + node + query(null)).toList());
        }

        private String scheme(String plain, String overTls) {
            return (tls == null ? plain : overTls) + "://";
        }

        /** {@code user:password@}, {@code :password@}, or nothing. */
        private String credentials() {
            if (password == null || password.isEmpty()) {
                return "";
            }
            return (username == null ? "" : percentEncoded(username)) + ":" + percentEncoded(password) + "@";
        }

        /** The query of a URI: {@code parameter}, and how TLS checks the peer unless it is Lettuce's default. */
        private String query(String parameter) {
            String verifyPeer = tls == null || tls == SslVerifyMode.FULL ? null : "verifyPeer=" + tls.name();
            if (parameter == null) {
                return verifyPeer == null ? "" : "?" + verifyPeer;
            }
            return "?" + parameter + (verifyPeer == null ? "" : "&" + verifyPeer);
        }

        private static List<String> trimmed(List<String> nodes, String kind) {
            Objects.requireNonNull(nodes, kind + " nodes");
            if (nodes.isEmpty()) {
                throw new IllegalArgumentException("a " + kind + " endpoint needs at least one node (host:port)");
            }
            return nodes.stream().map(String::trim).toList();
        }
    }

    /** Percent-encoded for a URI's user part or query (URLEncoder's '+' for a space would be read as a plus). */
    private static String percentEncoded(String text) {
        return URLEncoder.encode(text, StandardCharsets.UTF_8).replace("+", "%20");
    }
}
