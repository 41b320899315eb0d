package dev.relock.internal.single;

import dev.relock.internal.redis.RedisCalls;
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

    /**
     * Reads {@code maxmemory-policy} through {@code calls} (blocking, within the command timeout) and warns if it
     * evicts. On Cluster the command goes to one node, and that node's policy is the one judged.
     */
    static void warnIfLockKeysCanBeEvicted(RedisCalls calls, String address) {
        String policy;
        try {
            Map<String, String> reply = calls.await(calls.commands().configGet("maxmemory-policy"), "CONFIG GET", null);
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
