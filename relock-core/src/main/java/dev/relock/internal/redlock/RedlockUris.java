package dev.relock.internal.redlock;

import dev.relock.internal.engine.RedisConnections;
import io.lettuce.core.RedisURI;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/** The servers a Redlock client is given: an odd number of 3 to 7 distinct Redis masters, as URIs. */
final class RedlockUris {

    private RedlockUris() {
    }

    /**
     * Checks the URIs of {@code RelockClientBuilder.redlock(...)}.
     *
     * @return an immutable copy
     * @throws IllegalArgumentException if the count is not odd within 3..7, a URI is invalid or a
     *     Sentinel URI, or two name the same host and port
     */
    static List<String> check(List<String> uris) {
        Objects.requireNonNull(uris, "redisUris");
        if (uris.size() < 3 || uris.size() > 7 || uris.size() % 2 == 0) {
            throw new IllegalArgumentException("Redlock needs an odd number of 3 to 7 independent Redis servers, got "
                    + uris.size() + " URIs");
        }
        Set<String> servers = new HashSet<>();
        for (String text : uris) {
            RedisURI uri = parse(text);
            String server = uri.getHost().toLowerCase() + ":" + uri.getPort();
            if (!servers.add(server)) {
                throw new IllegalArgumentException("Redlock servers must be distinct; " + server
                        + " is given twice");
            }
        }
        return List.copyOf(uris);
    }

    /** One URI that {@link #check} accepts, parsed. */
    static RedisURI parse(String text) {
        Objects.requireNonNull(text, "a Redlock URI is null");
        RedisURI uri;
        try {
            uri = RedisURI.create(text);
        } catch (RuntimeException e) {
            // Lettuce's message may repeat the URI, password included
            throw new IllegalArgumentException("not a valid Redis URI: " + RedisConnections.withoutCredentials(text));
        }
        if (!uri.getSentinels().isEmpty() || uri.getHost() == null) {
            throw new IllegalArgumentException("a Redlock server must be one Redis master (redis:// or rediss://), "
                    + "not a Sentinel or socket URI: " + RedisConnections.withoutCredentials(text));
        }
        return uri;
    }
}
