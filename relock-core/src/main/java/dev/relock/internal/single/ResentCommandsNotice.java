package dev.relock.internal.single;

import dev.relock.internal.engine.RedisConnections;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.ClientOptions;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells, at INFO, that a Lettuce client sends the commands in flight again after it reconnected (at-least-once:
 * auto-reconnect without {@code REJECT_COMMANDS}, Lettuce's default; or any auto-reconnecting client of a Lettuce
 * before 6.7, relock's own included, as on Spring Boot 3.5's Lettuce 6.6). Nothing is wrong on such a client: every
 * relock script leaves what one run leaves, so locks stay exclusive and counts stay right. What is left is one
 * report: the release of an owner's last hold that Redis ran twice finds the lock already free the second time, and
 * that {@code unlock()} reports the lease lost although the lock was released. Hence INFO, not WARN.
 *
 * <p>Said once per caller's client, and once per JVM and cause for clients relock makes itself (the Spring starter
 * makes a new one at each connect attempt while Redis is down); repeats go to DEBUG. Threads: any.
 */
final class ResentCommandsNotice {

    private static final Logger log = LoggerFactory.getLogger(ResentCommandsNotice.class);

    /** The causes told for relock's own clients: disconnected behaviour and Lettuce version. */
    private static final Set<String> OWN_CLIENT_CAUSES = ConcurrentHashMap.newKeySet();
    /** The caller's clients told of, weakly held: the caller owns and closes them. Guarded by itself. */
    private static final Map<AbstractRedisClient, Boolean> CALLERS_CLIENTS = new WeakHashMap<>();

    private ResentCommandsNotice() {
    }

    /** Whether a client on {@code options} sends the commands in flight again after it reconnected. */
    static boolean sendsCommandsAgain(ClientOptions options) {
        return options.isAutoReconnect()
                && (options.getDisconnectedBehavior() != ClientOptions.DisconnectedBehavior.REJECT_COMMANDS
                        || RedisConnections.lettuceSendsInFlightCommandsAgain());
    }

    /**
     * Tells of {@code client} if it sends commands again and this is the first time for it (a caller's client) or
     * for its cause (one of relock's own).
     *
     * @param callers whether the caller gave the client (else relock made it)
     */
    static void tellIfCommandsAreSentAgain(AbstractRedisClient client, boolean callers) {
        ClientOptions options = client.getOptions();
        if (!sendsCommandsAgain(options)) {
            return;
        }
        boolean first;
        if (callers) {
            synchronized (CALLERS_CLIENTS) {
                first = CALLERS_CLIENTS.put(client, Boolean.TRUE) == null;
            }
        } else {
            first = OWN_CLIENT_CAUSES.add(options.getDisconnectedBehavior() + "/" + RedisConnections.lettuceVersion());
        }
        String remedy = callers && options.getDisconnectedBehavior() != ClientOptions.DisconnectedBehavior.REJECT_COMMANDS
                ? "set ClientOptions.disconnectedBehavior(REJECT_COMMANDS) on it (with Lettuce 6.7 or newer)"
                : "manage io.lettuce:lettuce-core at 6.7 or newer";
        String message = "relock: this Lettuce client sends a command again after a reconnect when its reply was lost"
                + " with the connection (autoReconnect with disconnectedBehavior {}, Lettuce {}). Locks stay exclusive"
                + " (relock's scripts are safe to run twice); the one effect is that an unlock() whose connection"
                + " dropped before its reply may report the lease lost although the lock was released. To rule that"
                + " out, " + remedy + ". See docs/spring.md#lettuce-before-67";
        if (first) {
            log.info(message, options.getDisconnectedBehavior(), RedisConnections.lettuceVersion());
        } else if (log.isDebugEnabled()) {
            log.debug(message, options.getDisconnectedBehavior(), RedisConnections.lettuceVersion());
        }
    }
}
