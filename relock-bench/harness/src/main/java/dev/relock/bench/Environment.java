package dev.relock.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.CodeSource;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** What the report says about the machine and the versions it measured. */
final class Environment {

    private static final Pattern JAR_VERSION = Pattern.compile("-(\\d+(?:\\.\\d+)+(?:[.-][A-Za-z0-9]+)*)\\.jar$");

    static String cpuModel() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
                if (line.startsWith("model name")) {
                    return line.substring(line.indexOf(':') + 1).trim();
                }
            }
        } catch (IOException e) {
            // not Linux
        }
        return System.getProperty("os.arch");
    }

    static String memory() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
                if (line.startsWith("MemTotal:")) {
                    long kib = Long.parseLong(line.replaceAll("\\D", ""));
                    return String.format("%.1f GiB", kib / 1024.0 / 1024.0);
                }
            }
        } catch (IOException | NumberFormatException e) {
            // not Linux
        }
        return "unknown";
    }

    /** The 1-minute load average, or NaN off Linux. */
    static double load() {
        try {
            return Double.parseDouble(Files.readString(Path.of("/proc/loadavg")).split(" ")[0]);
        } catch (IOException | RuntimeException e) {
            return Double.NaN;
        }
    }

    static String jdk() {
        return System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version")
                + " (" + System.getProperty("java.vm.vendor") + ")";
    }

    /** The version in the file name of the jar a class came from, or "?" (e.g. from target/classes). */
    static String versionOf(Class<?> type) {
        CodeSource source = type.getProtectionDomain().getCodeSource();
        if (source == null || source.getLocation() == null) {
            return "?";
        }
        Matcher matcher = JAR_VERSION.matcher(source.getLocation().getPath());
        return matcher.find() ? matcher.group(1) : "?";
    }

    /** The relock version this harness was built with (filtered into a resource by Maven). */
    static String relockVersion() {
        try (var in = Environment.class.getResourceAsStream("relock-bench.properties")) {
            if (in != null) {
                var properties = new java.util.Properties();
                properties.load(in);
                return properties.getProperty("relock.version", "?");
            }
        } catch (IOException e) {
            // fall through
        }
        return "?";
    }

    /** {@code git describe}-like: commit and whether the tree had changes, or null outside git. */
    static String gitState(Path directory) {
        String commit = run(directory, "git", "rev-parse", "--short", "HEAD");
        if (commit == null) {
            return null;
        }
        String status = run(directory, "git", "status", "--porcelain", "--untracked-files=no");
        return commit + (status != null && !status.isBlank() ? " with uncommitted changes" : "");
    }

    private static String run(Path directory, String... command) {
        try {
            Process process = new ProcessBuilder(command).directory(directory.toFile())
                    .redirectErrorStream(true).start();
            process.getOutputStream().close();
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            if (!process.waitFor(10, TimeUnit.SECONDS) || process.exitValue() != 0) {
                return null;
            }
            return output;
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    private Environment() {
    }
}
