package dev.relock.internal.engine;

import dev.relock.ClientIdentity;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What every engine does alike with Lettuce: the options of the clients relock creates, URIs in messages,
 * closing what was opened. Stateless. Public because the Redlock engine lives in its own package.
 */
public final class RedisConnections {

    private static final Logger log = LoggerFactory.getLogger(RedisConnections.class);

    private RedisConnections() {
    }

    /**
     * The options of every Lettuce client relock creates: reconnect automatically, fail commands
     * at once while disconnected instead of queueing them, time out commands and connects.
     */
    public static ClientOptions clientOptions(Duration commandTimeout) {
        return ClientOptions.builder()
                .autoReconnect(true)
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .timeoutOptions(TimeoutOptions.enabled(commandTimeout))
                .socketOptions(SocketOptions.builder().connectTimeout(commandTimeout).build())
                .build();
    }

    /**
     * The Lettuce on the class path, as its jar's manifest names it (e.g. {@code 6.6.0.RELEASE}), or null where the
     * manifest does not say (a shaded copy).
     */
    public static String lettuceVersion() {
        String version = RedisClient.class.getPackage().getImplementationVersion();
        return version == null ? null : version.split("/", 2)[0];
    }

    /**
     * Whether the Lettuce on the class path sends a command that was in flight when its connection dropped again
     * after the reconnect even under {@code REJECT_COMMANDS}: before 6.7 its endpoint fails such commands only when
     * auto-reconnect is off (6.7 fails them under {@code REJECT_COMMANDS} too). False where the version is unknown.
     */
    public static boolean lettuceSendsInFlightCommandsAgain() {
        String version = lettuceVersion();
        if (version == null) {
            return false;
        }
        String[] parts = version.split("\\.");
        try {
            int major = Integer.parseInt(parts[0]);
            int minor = parts.length > 1 ? Integer.parseInt(parts[1]) : 0;
            return major < 6 || (major == 6 && minor < 7);
        } catch (NumberFormatException e) {
            return false;
        }
    }

    /** The URI with whatever may be credentials replaced by ***, for messages. */
    public static String withoutCredentials(String uri) {
        // everything between the scheme and the last '@' may be credentials, '@' and '/' included
        return uri == null ? "null" : uri.replaceAll("^([A-Za-z][A-Za-z0-9+.-]*:(//)?).*@", "$1***@");
    }

    /**
     * Shuts a Lettuce client relock made down, waiting for it at most {@code timeout} and a second more. Lettuce's own
     * {@code shutdown} waits without bound for every connection it closes, and one close that never completed (CI, a
     * client whose Redis was out of reach) kept {@code close()} waiting for ever. Past the bound, its threads are left
     * to end by themselves, with a WARN.
     */
    public static void shutdown(AbstractRedisClient client, Duration timeout) {
        long bound = timeout.toMillis() + 1_000;
        try {
            client.shutdownAsync(0, timeout.toMillis(), TimeUnit.MILLISECONDS).get(bound, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            log.warn("a Lettuce client relock made did not shut down within {} ms; its threads are left to end by"
                    + " themselves", bound);
        } catch (ExecutionException e) {
            log.debug("shutting a Lettuce client down failed", e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Closes {@code closeable} if not null; a failure is logged at DEBUG, not thrown. */
    public static void closeQuietly(AutoCloseable closeable) {
        if (closeable == null) {
            return;
        }
        try {
            closeable.close();
        } catch (Exception e) {
            log.debug("closing {} failed", closeable, e);
        }
    }

    /**
     * Lettuce names every connection it opens on {@code uri} (CLIENT SETNAME in its handshake, again after a
     * reconnect; on a Sentinel URI the sentinels' connections too); a name given in the URI ({@code ?clientName=})
     * is kept.
     */
    public static void nameConnections(RedisURI uri, ClientIdentity identity) {
        if (uri.getClientName() == null) {
            uri.setClientName(identity.connectionName());
        }
    }}
