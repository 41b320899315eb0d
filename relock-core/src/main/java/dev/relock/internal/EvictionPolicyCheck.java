package dev.relock.internal;

import io.lettuce.core.api.sync.RedisCommands;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Warns once, when a client connects, if the server's {@code maxmemory-policy} lets Redis evict lock keys.
 *
 * <p>Every key relock writes has a TTL, so not only the {@code allkeys-*} policies but every {@code volatile-*} one
 * may drop a held lock when {@code maxmemory} is reached ({@code volatile-ttl} even prefers lock keys, whose TTLs
 * are short). An evicted lock is free for anybody at once; its holder hears of it at its next renewal. Only
 * {@code noeviction} is safe. The check is advice, never a failure: a server that refuses {@code CONFIG} (ACL,
 * renamed command, managed Redis) or answers slowly is logged at DEBUG and ignored.
 */
final class EvictionPolicyCheck {

    private static final Logger log = LoggerFactory.getLogger(EvictionPolicyCheck.class);

    private static final Set<String> EVICTING = Set.of(
            "allkeys-lru", "allkeys-lfu", "allkeys-random",
            "volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl");

    private EvictionPolicyCheck() {
    }

    /** Reads {@code maxmemory-policy} on {@code commands} (blocking, within its timeout) and warns if it evicts. */
    static void warnIfLockKeysCanBeEvicted(RedisCommands<String, String> commands, String address) {
        String policy;
        try {
            Map<String, String> reply = commands.configGet("maxmemory-policy");
            policy = reply.get("maxmemory-policy");
        } catch (RuntimeException e) {
            log.debug("cannot read maxmemory-policy of Redis at {} (CONFIG refused or renamed?): {}", address,
                    e.getMessage());
            return;
        }
        if (policy != null && EVICTING.contains(policy)) {
            log.warn("Redis at {} has maxmemory-policy {}: when maxmemory is reached it may evict held locks "
                    + "(relock's keys all have a TTL), which lets a second holder in before the first is told; "
                    + "use maxmemory-policy noeviction for locks", address, policy);
        }
    }
}
