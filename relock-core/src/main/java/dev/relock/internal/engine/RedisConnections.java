package dev.relock.internal.engine;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import java.time.Duration;
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

    /** The URI with whatever may be credentials replaced by ***, for messages. */
    public static String withoutCredentials(String uri) {
        // everything between the scheme and the last '@' may be credentials, '@' and '/' included
        return uri == null ? "null" : uri.replaceAll("^([A-Za-z][A-Za-z0-9+.-]*:(//)?).*@", "$1***@");
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
}
