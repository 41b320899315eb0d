package dev.relock.cli.demo;

import dev.relock.testredis.RedisServer;

/** What a run of the engine left in a fixture Redis, read with the fixture's own connection. */
public final class RunKeys {

    /**
     * The sum of the run counters in {@code redis} (all runs, any prefix). Above 0 once a phase has
     * begun: the parent resets them to 0 before it starts one.
     */
    public static long countersTotal(RedisServer redis) {
        String keys = redis.execute("KEYS", "*:counter:*");
        long total = 0;
        for (String key : keys.substring(1, keys.length() - 1).split(", ")) {
            if (!key.isEmpty()) {
                String value = redis.execute("GET", key);
                total += value == null ? 0 : Long.parseLong(value);
            }
        }
        return total;
    }

    private RunKeys() {}
}
