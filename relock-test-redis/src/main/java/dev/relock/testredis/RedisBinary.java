package dev.relock.testredis;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A {@code redis-server} executable and where it was found.
 *
 * <p>{@link #resolve()} looks, in order, at:
 * <ol>
 *   <li>the system property {@value #CHOICE_PROPERTY}: {@code embedded} forces {@link #embedded()};</li>
 *   <li>the environment variable {@value #PATH_VARIABLE}: the path of an executable to use;</li>
 *   <li>{@code redis-server} on {@code PATH};</li>
 *   <li>the Linux x86-64 binary inside the {@code com.github.codemonstur:embedded-redis} jar ({@link #embedded()}).</li>
 * </ol>
 * Instances are immutable and may be shared between threads. The embedded binary is extracted at most once per JVM,
 * into this JVM's scratch directory, which is deleted when the JVM exits.
 */
public final class RedisBinary {

    /** Environment variable naming the redis-server executable to use. */
    public static final String PATH_VARIABLE = "RELOCK_REDIS_SERVER";

    /** System property that, set to {@code embedded}, makes {@link #resolve()} return {@link #embedded()}. */
    public static final String CHOICE_PROPERTY = "relock.redis.binary";

    private static final String EMBEDDED_RESOURCE = "redis-server-6.2.6-v5-linux-amd64";
    private static final Pattern VERSION = Pattern.compile("\\bv=(\\d+(?:\\.\\d+)*)");

    private static RedisBinary embedded; // guarded by RedisBinary.class
    private static final ConcurrentMap<Path, String> VERSIONS = new ConcurrentHashMap<>();

    private final Path path;
    private final String source;

    private RedisBinary(Path path, String source) {
        this.path = path;
        this.source = source;
    }

    /**
     * Finds the redis-server to use, as described in the class comment.
     *
     * @throws IllegalStateException if {@value #CHOICE_PROPERTY} has an unknown value or {@value #PATH_VARIABLE}
     *     names no executable file
     * @throws UnsupportedOperationException if nothing is installed and the embedded binary cannot run here
     */
    public static RedisBinary resolve() {
        String choice = System.getProperty(CHOICE_PROPERTY, "").trim();
        if (choice.equalsIgnoreCase("embedded")) {
            return embedded();
        }
        if (!choice.isEmpty()) {
            throw new IllegalStateException(CHOICE_PROPERTY + " may only be 'embedded' (or unset), was '" + choice + "'");
        }
        return installed().orElseGet(RedisBinary::embedded);
    }

    /**
     * The redis-server installed here, without the embedded fallback: the executable {@value #PATH_VARIABLE} names,
     * else {@code redis-server} on {@code PATH}; empty if neither is set or found. (What {@code relock demo} asks
     * before it fetches the embedded-redis jar.)
     *
     * @throws IllegalStateException if {@value #PATH_VARIABLE} names no executable file
     */
    public static Optional<RedisBinary> installed() {
        String configured = System.getenv(PATH_VARIABLE);
        if (configured != null && !configured.isBlank()) {
            Path executable = Path.of(configured.trim());
            if (!Files.isRegularFile(executable) || !Files.isExecutable(executable)) {
                throw new IllegalStateException(PATH_VARIABLE + "=" + configured + " is not an executable file");
            }
            return Optional.of(new RedisBinary(executable.toAbsolutePath(), PATH_VARIABLE));
        }
        String searchPath = System.getenv("PATH");
        if (searchPath != null) {
            for (String entry : searchPath.split(Pattern.quote(File.pathSeparator))) {
                if (entry.isEmpty()) {
                    continue;
                }
                Path candidate = Path.of(entry, "redis-server");
                if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                    return Optional.of(new RedisBinary(candidate.toAbsolutePath(), "PATH"));
                }
            }
        }
        return Optional.empty();
    }

    /** Whether {@link #embedded()} can run here: only on Linux x86-64, the one platform whose binary is used. */
    public static boolean embeddedRunsHere() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        return os.contains("linux") && (arch.equals("amd64") || arch.equals("x86_64"));
    }

    /**
     * The redis-server shipped inside the embedded-redis jar (its resource is named 6.2.6; the binary reports
     * itself as 6.2.x, see {@link #version()}), extracted on first call.
     *
     * @throws UnsupportedOperationException if this is not Linux on x86-64, the only platform whose binary is used
     */
    public static synchronized RedisBinary embedded() {
        if (embedded == null) {
            if (!embeddedRunsHere()) {
                throw new UnsupportedOperationException("the embedded redis-server is used only on Linux x86-64, this is "
                        + System.getProperty("os.name") + " " + System.getProperty("os.arch")
                        + "; install redis-server or set " + PATH_VARIABLE);
            }
            embedded = new RedisBinary(extractEmbedded(), "embedded-redis");
        }
        return embedded;
    }

    /** A redis-server at an explicit path; {@link #source()} is {@code "explicit"}. */
    public static RedisBinary of(Path executable) {
        Objects.requireNonNull(executable, "executable");
        if (!Files.isRegularFile(executable) || !Files.isExecutable(executable)) {
            throw new IllegalArgumentException(executable + " is not an executable file");
        }
        return new RedisBinary(executable.toAbsolutePath(), "explicit");
    }

    private static Path extractEmbedded() {
        Path target = ProcessRegistry.instance().baseDirectory().resolve(EMBEDDED_RESOURCE);
        try (InputStream in = RedisBinary.class.getResourceAsStream("/" + EMBEDDED_RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException("resource /" + EMBEDDED_RESOURCE
                        + " not found: is com.github.codemonstur:embedded-redis on the classpath?");
            }
            Files.copy(in, target, StandardCopyOption.REPLACE_EXISTING);
            Files.setPosixFilePermissions(target, PosixFilePermissions.fromString("rwx------"));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot extract the embedded redis-server to " + target, e);
        }
        return target;
    }

    /** The absolute path of the executable. */
    public Path path() {
        return path;
    }

    /** Where it was found: {@code "RELOCK_REDIS_SERVER"}, {@code "PATH"}, {@code "embedded-redis"} or {@code "explicit"}. */
    public String source() {
        return source;
    }

    /**
     * The version the executable reports in {@code redis-server --version}, e.g. {@code "7.0.15"}. Runs the
     * executable once per path per JVM; later calls return the remembered answer.
     *
     * @throws IllegalStateException if the executable does not run or prints no {@code v=} version
     */
    public String version() {
        return VERSIONS.computeIfAbsent(path, RedisBinary::askVersion);
    }

    /** The major version, e.g. 7 for "7.0.15"; features that need Redis 7 check {@code majorVersion() >= 7}. */
    public int majorVersion() {
        String version = version();
        int dot = version.indexOf('.');
        return Integer.parseInt(dot < 0 ? version : version.substring(0, dot));
    }

    private static String askVersion(Path executable) {
        Duration timeout = TestTimeouts.scaled(Duration.ofSeconds(10));
        try {
            Process process = new ProcessBuilder(executable.toString(), "--version")
                    .redirectErrorStream(true)
                    .start();
            process.getOutputStream().close();
            // --version prints one short line, far less than a pipe buffer, so waiting before reading cannot
            // deadlock, and a hanging binary is killed instead of blocking a read forever
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                throw new IllegalStateException(executable + " --version did not exit within " + timeout);
            }
            String output;
            try (InputStream in = process.getInputStream()) {
                output = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            }
            Matcher matcher = VERSION.matcher(output);
            if (!matcher.find()) {
                throw new IllegalStateException(executable + " --version printed no version: " + output.strip());
            }
            return matcher.group(1);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + executable + " --version", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running " + executable + " --version", e);
        }
    }

    @Override
    public String toString() {
        return "RedisBinary[" + path + " from " + source + "]";
    }
}
