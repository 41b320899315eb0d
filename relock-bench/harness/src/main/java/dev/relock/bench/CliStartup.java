package dev.relock.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** S6: wall time of {@code ./relock exec NAME -- true}, from fork to exit, against the private server. */
final class CliStartup {

    /** The outcome: times in seconds, or why there are none. */
    record Outcome(List<Double> seconds, String command, String pending) {}

    static Outcome measure(Path cli, String redisUri, int runs) throws InterruptedException {
        if (cli == null || !Files.isExecutable(cli)) {
            return new Outcome(List.of(), null, "pending: no executable " + (cli == null ? "./relock" : cli)
                    + " in the work tree when this ran");
        }
        List<List<String>> shapes = List.of(
                List.of(cli.toString(), "exec", "--redis", redisUri, "bench-s6", "--", "true"),
                List.of(cli.toString(), "--redis", redisUri, "exec", "bench-s6", "--", "true"));
        String lastError = null;
        for (List<String> shape : shapes) {
            try {
                once(shape); // the first run also fills the page cache
                List<Double> seconds = new ArrayList<>();
                for (int i = 0; i < runs; i++) {
                    seconds.add(once(shape));
                }
                return new Outcome(seconds, String.join(" ", shape).replace(cli.toString(), "./relock")
                        .replace(redisUri, "<uri>"), null);
            } catch (IOException e) {
                lastError = e.getMessage();
            }
        }
        return new Outcome(List.of(), null, "pending: ./relock is there but failed: " + lastError);
    }

    private static double once(List<String> command) throws IOException, InterruptedException {
        long start = System.nanoTime();
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        process.getOutputStream().close();
        byte[] output = process.getInputStream().readAllBytes();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new IOException(String.join(" ", command) + " did not exit within 60 s");
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        if (process.exitValue() != 0) {
            String text = new String(output, StandardCharsets.UTF_8).strip();
            throw new IOException("exit " + process.exitValue() + ": "
                    + (text.length() > 300 ? text.substring(0, 300) + "…" : text));
        }
        return seconds;
    }

    private CliStartup() {
    }
}
