package dev.relock.cli;

import dev.relock.RelockClient;
import picocli.CommandLine.Option;

/** The options every command that talks to Redis shares (a picocli mixin). */
public final class ConnectionOptions {

    static final String DEFAULT_URI = "redis://127.0.0.1:6379";

    @Option(names = "--redis", paramLabel = "URI",
            description = "Redis to use: redis://[user:password@]host[:port][/db] or rediss://… for TLS."
                    + " Default: $RELOCK_REDIS, else " + DEFAULT_URI + ".")
    String redis;

    @Option(names = "--prefix", paramLabel = "PREFIX", defaultValue = "relock",
            description = "Key prefix of the locks (default: ${DEFAULT-VALUE}).")
    String prefix;

    @Option(names = "--verbose", description = "Show details (stack traces) of failures.")
    boolean verbose;

    /** The URI to use: --redis, else $RELOCK_REDIS, else the default. */
    public String uri() {
        if (redis != null) {
            return redis;
        }
        String fromEnvironment = System.getenv("RELOCK_REDIS");
        return fromEnvironment != null && !fromEnvironment.isBlank() ? fromEnvironment : DEFAULT_URI;
    }

    /** Whether the user chose a Redis explicitly (option or environment). */
    public boolean uriGiven() {
        return redis != null || (System.getenv("RELOCK_REDIS") != null && !System.getenv("RELOCK_REDIS").isBlank());
    }

    /** A client for {@link #uri()} with {@link #prefix}. */
    public RelockClient connect() {
        return RelockClient.builder().redisUri(uri()).keyPrefix(prefix).build();
    }
}
