package dev.relock.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The server's own ceilings, measured with redis-benchmark (the one beside the redis-server the
 * fixture runs, else on the PATH): PING and an EVAL of {@code SET NX PX} on random keys, with 1
 * and 50 connections, so every figure of the scenarios can be read against the physical limit.
 */
final class ServerCeilings {

    private static final Pattern CSV_CELL = Pattern.compile("\"([^\"]*)\"");

    static final String SET_NX_PX_SCRIPT = "return redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', 30000)";

    /** One redis-benchmark line. */
    record Ceiling(String test, int clients, double requestsPerSecond, double p50Millis, double p99Millis) {}

    /** The redis-benchmark to use, or null if there is none. */
    static Path find(Path redisServer) {
        Path beside = redisServer.resolveSibling("redis-benchmark");
        if (Files.isExecutable(beside)) {
            return beside;
        }
        String path = System.getenv("PATH");
        if (path != null) {
            for (String dir : path.split(":")) {
                Path candidate = Path.of(dir, "redis-benchmark");
                if (!dir.isEmpty() && Files.isExecutable(candidate)) {
                    return candidate;
                }
            }
        }
        return null;
    }

    static List<Ceiling> measure(Path benchmark, int port, boolean quick) throws IOException, InterruptedException {
        List<Ceiling> ceilings = new ArrayList<>();
        for (int clients : new int[] {1, 50}) {
            int requests = (clients == 1 ? 40_000 : 200_000) / (quick ? 8 : 1);
            ceilings.add(run(benchmark, port, clients, requests, "PING", List.of("-t", "ping_mbulk")));
            ceilings.add(run(benchmark, port, clients, requests, "EVAL SET NX PX",
                    List.of("-r", "1000000", "EVAL", SET_NX_PX_SCRIPT, "1", "bench-ceiling:__rand_int__", "v")));
        }
        return ceilings;
    }

    private static Ceiling run(Path benchmark, int port, int clients, int requests, String test, List<String> what)
            throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(benchmark.toString(), "-h", "127.0.0.1",
                "-p", Integer.toString(port), "-c", Integer.toString(clients), "-n", Integer.toString(requests),
                "--csv"));
        command.addAll(what);
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        process.getOutputStream().close();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!process.waitFor(2, TimeUnit.MINUTES) || process.exitValue() != 0) {
            process.destroyForcibly();
            throw new IOException("redis-benchmark failed: " + output.strip());
        }
        // "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
        // (the test name of a command line holds the command, commas and all, so cells are read by their quotes)
        for (String line : output.split("\r?\n")) {
            List<String> cells = new ArrayList<>();
            Matcher cell = CSV_CELL.matcher(line);
            while (cell.find()) {
                cells.add(cell.group(1));
            }
            if (cells.size() >= 7 && !cells.get(0).equals("test")) {
                try {
                    return new Ceiling(test, clients, Double.parseDouble(cells.get(1)),
                            Double.parseDouble(cells.get(4)), Double.parseDouble(cells.get(6)));
                } catch (NumberFormatException e) {
                    // not a data line
                }
            }
        }
        throw new IOException("no result in redis-benchmark output: " + output.strip());
    }

    private ServerCeilings() {
    }
}
