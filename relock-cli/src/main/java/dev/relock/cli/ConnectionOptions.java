package dev.relock.cli;

import dev.relock.RedisUnavailableException;
import dev.relock.RelockClient;
import dev.relock.RelockClientBuilder;
import java.net.UnknownHostException;
import java.time.Duration;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** The options every command that talks to Redis shares (a picocli mixin). */
public final class ConnectionOptions {

    static final String DEFAULT_URI = "redis://127.0.0.1:6379";
    private static final String CANNOT_CONNECT = "cannot connect to Redis at ";

    @Spec(Spec.Target.MIXEE)
    CommandSpec command;

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
        return connect(null);
    }

    /**
     * A client for {@link #uri()} with {@link #prefix} and, if not null, this default lease (what
     * the lease keeper renews).
     *
     * @throws dev.relock.RedisUnavailableException if Redis cannot be reached (exit 69)
     * @throws ParameterException if the URI or prefix is malformed (a usage error, exit 64)
     */
    public RelockClient connect(Duration defaultLease) {
        Logging.configure(verbose);
        RelockClientBuilder builder = RelockClient.builder();
        try {
            // CLIENT LIST tells the CLI's connections from the applications'
            builder.redisUri(uri()).keyPrefix(prefix).applicationName("relock-cli");
            if (defaultLease != null) {
                builder.defaultLease(defaultLease);
            }
        } catch (IllegalArgumentException e) {
            throw usageError(e);
        }
        try {
            return builder.build();
        } catch (IllegalArgumentException e) {
            throw usageError(e);
        } catch (RedisUnavailableException e) {
            throw shortened(e);
        }
    }

    private RuntimeException usageError(IllegalArgumentException e) {
        // the library names its builder methods; the user knows the options
        String message = e.getMessage().replace("redisUri", "--redis").replace("keyPrefix", "--prefix");
        return command == null ? new IllegalArgumentException(message, e)
                : new ParameterException(command.commandLine(), message, e);
    }

    /**
     * "cannot connect to Redis at HOST:PORT: Connection refused" instead of Lettuce's
     * "Unable to connect to HOST/&lt;unresolved&gt;:PORT"; the full chain stays the cause, for --verbose.
     */
    private static RedisUnavailableException shortened(RedisUnavailableException e) {
        String message = String.valueOf(e.getMessage());
        int end = message.indexOf(": ", CANNOT_CONNECT.length());
        if (!message.startsWith(CANNOT_CONNECT) || end < 0) {
            return e;
        }
        Throwable root = e;
        boolean unknownHost = false;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
            unknownHost |= root instanceof UnknownHostException;
        }
        String reason = unknownHost ? "unknown host"
                : root.getMessage() != null ? Failures.oneLine(root.getMessage())
                : root.getClass().getSimpleName();
        return new RedisUnavailableException(message.substring(0, end) + ": " + reason, e);
    }
}
