package dev.relock.bench;

import dev.relock.testredis.RedisServer;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads the private server's INFO sections: CPU time and per-command call counts. Over several
 * servers (Redlock's nodes) the CPU time is their sum and the other readings are the first's.
 */
final class ServerStats {

    private final List<RedisServer> servers;
    private final RedisServer server;

    ServerStats(RedisServer server) {
        this(List.of(server));
    }

    ServerStats(List<RedisServer> servers) {
        this.servers = List.copyOf(servers);
        this.server = this.servers.get(0);
    }

    /** Seconds of CPU the servers have used (user + system, main thread and background threads). */
    double cpuSeconds() {
        double seconds = 0;
        for (RedisServer each : servers) {
            Map<String, String> cpu = fields(each.execute("INFO", "cpu"));
            seconds += Double.parseDouble(cpu.getOrDefault("used_cpu_user", "0"))
                    + Double.parseDouble(cpu.getOrDefault("used_cpu_sys", "0"));
        }
        return seconds;
    }

    /** Calls per command name (lower case) from INFO commandstats. */
    Map<String, Long> commandCalls() {
        Map<String, Long> calls = new LinkedHashMap<>();
        commandTimes().forEach((command, figures) -> calls.put(command, figures[0]));
        return calls;
    }

    /** Per command name (lower case), from INFO commandstats: {calls, µs spent in them}. */
    Map<String, long[]> commandTimes() {
        Map<String, long[]> times = new LinkedHashMap<>();
        for (Map.Entry<String, String> entry : fields(server.execute("INFO", "commandstats")).entrySet()) {
            if (!entry.getKey().startsWith("cmdstat_")) {
                continue;
            }
            long[] figures = new long[2];
            for (String part : entry.getValue().split(",")) {
                if (part.startsWith("calls=")) {
                    figures[0] = Long.parseLong(part.substring("calls=".length()));
                } else if (part.startsWith("usec=")) {
                    figures[1] = Long.parseLong(part.substring("usec=".length()));
                }
            }
            times.put(entry.getKey().substring("cmdstat_".length()), figures);
        }
        return times;
    }

    /**
     * All commands together, from one INFO commandstats reading of the first server: {calls, µs spent in them}, less
     * INFO (the readings' own).
     */
    long[] commandTotals() {
        long[] totals = new long[2];
        commandTimes().forEach((command, figures) -> {
            if (!command.equals("info")) {
                totals[0] += figures[0];
                totals[1] += figures[1];
            }
        });
        return totals;
    }

    /**
     * Commands the first server has run, from INFO commandstats: those sent and those scripts called, less the
     * INFO commands this class sends (one per reading).
     */
    long totalCalls() {
        return total(commandCalls());
    }

    /** The calls of one {@link #commandCalls} reading, all commands together, less INFO (the readings' own). */
    static long total(Map<String, Long> calls) {
        long total = 0;
        for (Map.Entry<String, Long> command : calls.entrySet()) {
            if (!command.getKey().equals("info")) {
                total += command.getValue();
            }
        }
        return total;
    }

    /** The value of one INFO field, e.g. "redis_version". */
    String info(String section, String field) {
        return fields(server.execute("INFO", section)).get(field);
    }

    static Map<String, String> fields(String info) {
        Map<String, String> fields = new LinkedHashMap<>();
        for (String line : info.split("\r?\n")) {
            int colon = line.indexOf(':');
            if (colon > 0 && !line.startsWith("#")) {
                fields.put(line.substring(0, colon).trim(), line.substring(colon + 1).trim());
            }
        }
        return fields;
    }
}
