package dev.relock.internal.single;

import dev.relock.RelockClient;
import dev.relock.internal.engine.EngineClient;
import dev.relock.internal.redis.RedisCalls;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which newer server commands the Redis a client connected to offers, asked once at connect with one
 * {@code COMMAND INFO} (never per call). A server that refuses {@code COMMAND} (ACL, renamed command) is
 * taken to offer none of them, so relock falls back to what every supported server has. On Cluster the
 * answer of one node stands for all; a cluster is assumed to run one server version.
 *
 * @param shardedPubSub {@code SPUBLISH}/{@code SSUBSCRIBE} (Redis 7.0)
 * @param waitAof {@code WAITAOF} (Redis 7.2)
 * @param conditionalDelete {@code DELEX} and {@code SET … IFEQ} (Redis 8.4); known, not used: they
 *     act on string keys, and relock's locks are hashes with queues and fences (docs/keys-and-scripts.md,
 *     "Newer server commands")
 *
 * <p>Public because tests and diagnostics outside this package ask a client what its server offers ({@link #of}).
 */
public record ServerFeatures(boolean shardedPubSub, boolean waitAof, boolean conditionalDelete) {

    private static final Logger log = LoggerFactory.getLogger(ServerFeatures.class);

    /** What a server that could not be asked is assumed to offer: nothing newer than Redis 6.2. */
    public static final ServerFeatures NONE = new ServerFeatures(false, false, false);

    /**
     * What the server of a client found at connect, for tests and diagnostics (public for them);
     * {@link #NONE} for a Redlock client, which does not ask.
     */
    public static ServerFeatures of(RelockClient client) {
        return ((EngineClient) client).engine() instanceof SingleServerEngine single ? single.serverFeatures() : NONE;
    }

    /** Asks the server through {@code calls} (blocking, within the command timeout). */
    public static ServerFeatures probe(RedisCalls calls, String address) {
        List<Object> reply;
        try {
            reply = calls.await(calls.commands().commandInfo("SPUBLISH", "WAITAOF", "DELEX"), "COMMAND INFO", null);
        } catch (RuntimeException e) {
            log.debug("cannot ask Redis at {} which commands it has (COMMAND refused or renamed?): {}", address,
                    e.getMessage());
            return NONE;
        }
        // one entry per command asked, in order; an unknown command's entry is nil
        ServerFeatures features = new ServerFeatures(known(reply, 0), known(reply, 1), known(reply, 2));
        log.debug("Redis at {} offers {}", address, features);
        return features;
    }

    private static boolean known(List<Object> reply, int index) {
        return reply != null && reply.size() > index && reply.get(index) != null;
    }
}
