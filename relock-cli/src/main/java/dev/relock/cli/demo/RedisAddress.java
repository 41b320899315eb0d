package dev.relock.cli.demo;

import io.lettuce.core.RedisURI;

/** Reading a Redis URI and showing it without its credentials. */
public final class RedisAddress {

    /**
     * Parses a Lettuce URI ({@code redis://[user:password@]host[:port][/db]}, {@code rediss://…}).
     *
     * @throws IllegalArgumentException with a message that shows the URI without credentials
     */
    public static RedisURI parse(String uri) {
        try {
            return RedisURI.create(uri);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("'" + withoutCredentials(uri) + "' is not a Redis URI;"
                    + " write it like redis://host:6379, redis://user:password@host:6379/0 or rediss://host:6380");
        }
    }

    /** {@code redis[s]://host:port[/db]}: the address, never the user or password. */
    public static String display(String uri) {
        RedisURI parsed;
        try {
            parsed = RedisURI.create(uri);
        } catch (RuntimeException e) {
            return withoutCredentials(uri);
        }
        if (parsed.getHost() == null) {
            return withoutCredentials(uri);
        }
        return (parsed.isSsl() ? "rediss" : "redis") + "://" + parsed.getHost() + ":" + parsed.getPort()
                + (parsed.getDatabase() != 0 ? "/" + parsed.getDatabase() : "");
    }

    private static String withoutCredentials(String uri) {
        int scheme = uri.indexOf("://");
        int at = uri.lastIndexOf('@');
        return scheme >= 0 && at > scheme ? uri.substring(0, scheme + 3) + "…@" + uri.substring(at + 1) : uri;
    }

    private RedisAddress() {}
}
