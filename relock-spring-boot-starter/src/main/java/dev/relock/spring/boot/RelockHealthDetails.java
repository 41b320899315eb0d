package dev.relock.spring.boot;

import dev.relock.RelockClient;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What both lines' health indicators report: one PING round trip (which throws, making the
 * indicator DOWN, when Redis does not answer within the command timeout) and the held locks.
 */
final class RelockHealthDetails {

    private RelockHealthDetails() {}

    static Map<String, Object> of(RelockClient client) {
        Duration ping = client.ping();
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("pingMillis", ping.toNanos() / 1_000_000.0);
        details.put("heldLocks", client.heldLocks().size());
        details.put("keyPrefix", client.settings().keyPrefix());
        // what CLIENT LIST shows for its connections (not for a Lettuce client the application passed)
        details.put("connectionName", client.identity().connectionName());
        return details;
    }
}
