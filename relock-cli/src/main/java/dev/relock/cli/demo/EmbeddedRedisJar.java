package dev.relock.cli.demo;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Map;

/**
 * The {@code com.github.codemonstur:embedded-redis} jar, which carries the Linux x86-64 redis-server that
 * {@code relock demo} runs where none is installed. It is on no class path (12 MB that every other command would
 * carry for nothing); {@link #find} looks, in order, in
 * <ol>
 *   <li>the user's cache, {@code ${XDG_CACHE_HOME:-~/.cache}/relock/demo/}, where an earlier fetch left it;</li>
 *   <li>the local Maven repository, {@code ~/.m2/repository} (a developer's machine has it from the build);</li>
 *   <li>the Maven repository {@code $RELOCK_MAVEN_REPOSITORY} names (a mirror), else Maven Central, over HTTPS:
 *       fetched into the cache.</li>
 * </ol>
 * A copy is used only if its SHA-256 is the one this build recorded ({@link DemoArtifacts}), wherever it comes from:
 * a pinned digest also catches what a checksum file served beside the jar, by the same server, would not. A download
 * goes to a {@code .part} file moved into place only once it checks out, so concurrent demos and interrupted
 * downloads never leave a partial jar under the final name.
 */
final class EmbeddedRedisJar {

    /** Environment variable: the base URL of a Maven repository to fetch from instead of Maven Central. */
    static final String REPOSITORY_VARIABLE = "RELOCK_MAVEN_REPOSITORY";

    static final String CENTRAL = "https://repo.maven.apache.org/maven2";

    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);
    /** Until the response starts; the body then takes as long as the network needs. */
    private static final Duration RESPONSE_TIMEOUT = Duration.ofSeconds(30);

    private final String version;
    private final String sha256;
    private final Map<String, String> environment;
    private final PrintWriter err;

    private EmbeddedRedisJar(DemoArtifacts artifacts, Map<String, String> environment, PrintWriter err) {
        this.version = artifacts.embeddedRedisVersion();
        this.sha256 = artifacts.embeddedRedisSha256();
        this.environment = environment;
        this.err = err;
    }

    /**
     * A verified copy of the jar, fetched if need be; {@code err} is told of a fetch and of a copy set aside.
     *
     * @throws IllegalStateException if no verified copy can be had; the message says where it was looked for
     */
    static Path find(DemoArtifacts artifacts, Map<String, String> environment, PrintWriter err)
            throws InterruptedException {
        return new EmbeddedRedisJar(artifacts, environment, err).find();
    }

    private Path find() throws InterruptedException {
        String fileName = "embedded-redis-" + version + ".jar";
        String inRepository = "com/github/codemonstur/embedded-redis/" + version + "/" + fileName;
        Path cached = cacheDirectory().resolve(fileName);
        if (Files.isRegularFile(cached)) {
            if (verified(cached)) {
                return cached;
            }
            delete(cached); // ours, and broken: fetched again below
        }
        Path local = home().resolve(".m2/repository").resolve(inRepository);
        if (Files.isRegularFile(local)) {
            if (verified(local)) {
                return local;
            }
            err.println("relock: not using " + local + ": its SHA-256 is not the one this build of relock expects");
        }
        String repository = environment.getOrDefault(REPOSITORY_VARIABLE, "").strip().replaceAll("/+$", "");
        return download(URI.create((repository.isEmpty() ? CENTRAL : repository) + "/" + inRepository), cached);
    }

    private Path download(URI uri, Path target) throws InterruptedException {
        err.println("relock: no redis-server is installed here; fetching embedded-redis " + version
                + " (12 MB, it holds one) from " + uri + " into " + target.getParent());
        err.flush();
        Path part = null;
        try {
            Files.createDirectories(target.getParent());
            part = Files.createTempFile(target.getParent(), target.getFileName() + ".", ".part");
            HttpClient client = HttpClient.newBuilder()
                    .connectTimeout(CONNECT_TIMEOUT)
                    .followRedirects(HttpClient.Redirect.NORMAL)
                    .build();
            HttpRequest request = HttpRequest.newBuilder(uri).timeout(RESPONSE_TIMEOUT).GET().build();
            HttpResponse<InputStream> response = client.send(request, HttpResponse.BodyHandlers.ofInputStream());
            String actual;
            try (InputStream body = response.body()) {
                if (response.statusCode() != 200) {
                    throw new IOException("HTTP status " + response.statusCode());
                }
                MessageDigest digest = sha256();
                try (InputStream in = new DigestInputStream(body, digest); OutputStream out = Files.newOutputStream(part)) {
                    in.transferTo(out);
                }
                actual = HexFormat.of().formatHex(digest.digest());
            }
            if (!actual.equalsIgnoreCase(sha256)) {
                throw new IllegalStateException("embedded-redis " + version + " from " + uri + " has SHA-256 " + actual
                        + ", not the " + sha256 + " this build of relock expects: not used");
            }
            // rename(2): the final name holds a whole, verified jar or nothing
            Files.move(part, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            return target;
        } catch (IOException e) {
            throw new IllegalStateException("embedded-redis " + version + ", which holds one, could not be fetched from "
                    + uri + ": " + describe(e), e);
        } finally {
            if (part != null) {
                delete(part);
            }
        }
    }

    /** {@code ${XDG_CACHE_HOME:-$HOME/.cache}/relock/demo}, as the launcher places its class-data archive. */
    private Path cacheDirectory() {
        String xdg = environment.getOrDefault("XDG_CACHE_HOME", "");
        Path root = xdg.isEmpty() ? home().resolve(".cache") : Path.of(xdg);
        return root.resolve("relock").resolve("demo");
    }

    /** {@code $HOME}, as the shell sees it (the JVM's user.home comes from the password database instead). */
    private Path home() {
        String home = environment.getOrDefault("HOME", "");
        return Path.of(home.isEmpty() ? System.getProperty("user.home") : home);
    }

    private boolean verified(Path jar) {
        MessageDigest digest = sha256();
        try (InputStream in = new DigestInputStream(Files.newInputStream(jar), digest)) {
            in.transferTo(OutputStream.nullOutputStream());
        } catch (IOException e) {
            return false;
        }
        return HexFormat.of().formatHex(digest.digest()).equalsIgnoreCase(sha256);
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
    }

    private static void delete(Path file) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete " + file, e);
        }
    }

    /** HttpClient's connection failures often carry no message. */
    private static String describe(IOException e) {
        return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    }
}
