package dev.relock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.relock.cli.demo.RedisTarget;
import dev.relock.testredis.ClosedPort;
import dev.relock.testredis.RedisBinary;
import dev.relock.testredis.RedisServer;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.JarURLConnection;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The tarball an operator installs, {@code target/relock-<version>.tar.gz} from this build's package phase (so a
 * failsafe test), unpacked with tar and run as installed: {@code bin/relock} with exactly the environment a cron
 * job has (PATH, HOME, and JAVA_HOME here), RELOCK_BUILD unset, a HOME of its own, and a PATH that is this one
 * without Maven and without redis-server, so that demo's private Redis must come from where the tarball says.
 */
@Tag("redis")
class DistributionIT {

    private static final String VERSION = System.getProperty("relock.version");
    private static final Path TARBALL = Path.of(System.getProperty("relock.distribution", "missing"));
    private static final String EMBEDDED_RESOURCE = "redis-server-6.2.6-v5-linux-amd64";
    private static final String DEMO = "demo --embedded --workers 1 --threads 1 --locks 1 --duration 100ms";

    @TempDir
    static Path tmp;

    private static Path installed;
    private static Path path;
    private static RedisServer redis;

    @BeforeAll
    static void unpackTheTarball() throws IOException {
        assertThat(VERSION).as("relock.version is set by failsafe, which runs this test after package (mvn verify)")
                .isNotNull();
        assertThat(TARBALL).as("made by mvn package").isRegularFile();
        Launcher.Result untar = Launcher.startCommand(List.of("tar", "-xzf", TARBALL.toString(), "-C", tmp.toString()),
                tmp, Map.of()).await();
        assertThat(untar.exitCode()).as(untar.describe()).isZero();
        installed = tmp.resolve("relock-" + VERSION);
        path = pathWithout(tmp.resolve("path"), "redis-server", "mvn");
        redis = RedisServer.start();
    }

    @AfterAll
    static void stopRedisAndUnlinkThePath() throws IOException {
        if (redis != null) {
            redis.close();
        }
        if (path == null) {
            return;
        }
        // not left for @TempDir, which warns about each link out of it
        try (Stream<Path> links = Files.list(path)) {
            for (Path link : links.toList()) {
                Files.delete(link);
            }
        }
    }

    /** docs/cli.md unpacks the file this build makes and links the directory it unpacks to. */
    @Test
    void theDocsInstallTheTarballThisBuildMakes() throws IOException {
        String docs = Files.readString(Path.of("").toAbsolutePath().resolve("../docs/cli.md"));
        assertThat(installed).isDirectory();
        assertThat(docs).contains("sudo tar -xzf " + TARBALL.getFileName() + " -C /opt")
                .contains("sudo ln -sfn /opt/" + installed.getFileName() + " /opt/relock");
    }

    @Test
    void theRuntimeClassPathHoldsNoTestFixtureWhichOnlyDemoHasBesideIt() throws IOException {
        assertThat(Files.isExecutable(installed.resolve("bin/relock"))).isTrue();
        assertThat(installed.resolve("LICENSE")).isRegularFile();
        assertThat(Files.readString(installed.resolve("README.md"))).contains("relock-" + VERSION + ".tar.gz")
                .contains("*/15 * * * * /opt/relock/bin/relock exec").doesNotContain("${project");

        List<String> lib = names(installed.resolve("lib"));
        assertThat(lib).contains("relock-cli-" + VERSION + ".jar", "relock-core-" + VERSION + ".jar")
                .anyMatch(name -> name.startsWith("picocli-"))
                .anyMatch(name -> name.startsWith("lettuce-core-"))
                .noneMatch(name -> name.startsWith("relock-test-redis") || name.startsWith("embedded-redis"))
                .noneMatch(name -> name.startsWith("junit") || name.startsWith("assertj") || name.startsWith("awaitility"));
        assertThat(names(installed.resolve("demo"))).containsExactly("relock-test-redis-" + VERSION + ".jar");
        assertThat(names(installed)).containsExactlyInAnyOrder("bin", "lib", "demo", "LICENSE", "README.md");
    }

    @Test
    void runsAsInstalledWithoutMavenOrABuildAndKeepsItsArchiveInTheUserCache() throws IOException {
        Path home = Files.createDirectory(tmp.resolve("home-run"));
        Launcher.Result version = run(home, Map.of(), "--version");
        assertThat(version.exitCode()).as(version.describe()).isZero();
        assertThat(version.stdout()).isEqualTo("relock " + VERSION + "\n");
        assertThat(version.stderr()).isEmpty();

        Launcher.Result help = run(home, Map.of(), "--help");
        assertThat(help.exitCode()).as(help.describe()).isZero();
        assertThat(help.stdout()).contains("exec", "list", "inspect", "unlock", "demo");

        // list, run by exec while exec holds the lock: both from the unpacked tree; --redis before the command, which
        // the launcher still finds to dump its archive
        Launcher.Result held = run(home, Map.of(), "--redis", redis.uri(), "exec", "nightly-report", "--",
                installed.resolve("bin/relock").toString(), "list", "--redis", redis.uri());
        assertThat(held.exitCode()).as(held.describe()).isZero();
        assertThat(held.stdout()).contains("nightly-report");
        assertThat(held.stderr()).isEmpty();

        // the exec above dumped the archive as it exited; this run checks it and puts it in place
        Launcher.Result again = run(home, Map.of(), "--version");
        assertThat(again.exitCode()).as(again.describe()).isZero();
        try (Stream<Path> archives = Files.list(home.resolve(".cache/relock/cds"))) {
            assertThat(archives.map(p -> p.getFileName().toString())).singleElement().asString().endsWith(".jsa");
        }
        assertThat(installed.resolve("cds")).doesNotExist();
    }

    @Test
    void demoRunsTheRedisServerThatRelockRedisServerNamesAndFetchesNothing() throws IOException {
        Path home = Files.createDirectory(tmp.resolve("home-named"));
        Launcher.Result demo = run(home, Map.of("RELOCK_REDIS_SERVER", RedisBinary.resolve().path().toString()),
                DEMO.split(" "));

        assertThat(demo.exitCode()).as(demo.describe()).isZero();
        assertThat(demo.stdout()).contains("a private redis-server").contains("from $RELOCK_REDIS_SERVER")
                .contains("With the lock all");
        assertThat(home.resolve(".cache/relock/demo")).doesNotExist();
    }

    @Test
    void withoutARedisServerDemoFetchesEmbeddedRedisChecksItAndKeepsIt() throws Exception {
        Path jar = embeddedRedisJar();
        assertThat(sha256(jar)).as("embedded-redis.sha256 in the root POM, for the version the build uses")
                .isEqualTo(buildProperties().getProperty("embedded-redis.sha256"));
        String inRepository = "/maven2/com/github/codemonstur/embedded-redis/" + jar.getParent().getFileName()
                + "/" + jar.getFileName();
        AtomicInteger requests = new AtomicInteger();
        HttpServer repository = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        repository.createContext(inRepository, exchange -> {
            byte[] body = Files.readAllBytes(jar);
            if (requests.incrementAndGet() == 1) {
                body[body.length / 2] ^= 1; // the first answer is tampered with
            }
            exchange.sendResponseHeaders(200, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        repository.start();
        try {
            Path home = Files.createDirectory(tmp.resolve("home-fetch"));
            Map<String, String> mirror = Map.of("RELOCK_MAVEN_REPOSITORY",
                    "http://127.0.0.1:" + repository.getAddress().getPort() + "/maven2/");
            Path cache = home.resolve(".cache/relock/demo");

            Launcher.Result tampered = run(home, mirror, DEMO.split(" "));
            assertThat(tampered.exitCode()).as(tampered.describe()).isEqualTo(ExitCodes.UNAVAILABLE);
            assertThat(tampered.stderr()).contains("relock: cannot start a private redis-server: no redis-server is"
                    + " installed here").contains("has SHA-256").contains("not used");
            assertThat(names(cache)).as("nothing kept").isEmpty();

            Launcher.Result fetched = run(home, mirror, DEMO.split(" "));
            assertThat(fetched.exitCode()).as(fetched.describe()).isZero();
            assertThat(fetched.stderr()).startsWith("relock: no redis-server is installed here; fetching embedded-redis");
            assertThat(fetched.stdout()).contains("from the embedded-redis artifact").contains("With the lock all");
            assertThat(names(cache)).containsExactly(jar.getFileName().toString());
            assertThat(sha256(cache.resolve(jar.getFileName()))).isEqualTo(sha256(jar));
            assertThat(requests).hasValue(2);
        } finally {
            repository.stop(0);
        }
    }

    @Test
    void withoutARedisServerDemoTakesEmbeddedRedisFromTheLocalMavenRepositoryWithoutTheNetwork() throws IOException {
        Path jar = embeddedRedisJar();
        Path home = Files.createDirectory(tmp.resolve("home-m2"));
        Path local = home.resolve(".m2/repository/com/github/codemonstur/embedded-redis")
                .resolve(jar.getParent().getFileName()).resolve(jar.getFileName());
        Files.createDirectories(local.getParent());
        Files.copy(jar, local);
        Launcher.Result demo;
        try (ClosedPort closed = ClosedPort.open()) {
            demo = run(home, Map.of("RELOCK_MAVEN_REPOSITORY", "http://127.0.0.1:" + closed.port()), DEMO.split(" "));
        }

        assertThat(demo.exitCode()).as(demo.describe()).isZero();
        assertThat(demo.stdout()).contains("from the embedded-redis artifact");
        assertThat(demo.stderr()).isEmpty();
        assertThat(home.resolve(".cache/relock/demo")).as("used where it is").doesNotExist();
    }

    @Test
    void withNoRedisServerAnywhereDemoSaysWhatToInstall() throws IOException {
        Path home = Files.createDirectory(tmp.resolve("home-none"));
        Launcher.Result demo;
        int port;
        try (ClosedPort closed = ClosedPort.open()) {
            port = closed.port();
            demo = run(home, Map.of("RELOCK_MAVEN_REPOSITORY", "http://127.0.0.1:" + port), DEMO.split(" "));
        }

        assertThat(demo.exitCode()).as(demo.describe()).isEqualTo(ExitCodes.UNAVAILABLE);
        assertThat(demo.stderrLines()).last().asString()
                .startsWith("relock: cannot start a private redis-server: no redis-server is installed here"
                        + " (none on the PATH, $RELOCK_REDIS_SERVER unset), and embedded-redis ")
                .contains("could not be fetched from http://127.0.0.1:" + port + "/com/github/codemonstur/")
                .contains("; install redis-server on the PATH, set $RELOCK_REDIS_SERVER to one, or pass --redis URI");
        // the demo never uses a Redis nobody named, but points at one that answers at the default address
        boolean answersThere = RedisTarget.probe("127.0.0.1", 6379, Duration.ofSeconds(1)) == RedisTarget.Probe.ANSWERS;
        assertThat(demo.stderrLines()).last().asString().as("whether it names the Redis at the default address")
                .satisfies(line -> assertThat(line.endsWith("; a Redis answers at redis://127.0.0.1:6379: pass --redis"
                        + " redis://127.0.0.1:6379 to run the demo on it")).isEqualTo(answersThere));
    }

    /** {@code bin/relock args...} as installed, with only PATH, HOME and JAVA_HOME and {@code environment} set. */
    private static Launcher.Result run(Path home, Map<String, String> environment, String... args) {
        List<String> command = new ArrayList<>();
        command.add(installed.resolve("bin/relock").toString());
        command.addAll(List.of(args));
        Map<String, String> variables = new HashMap<>(environment);
        variables.put("PATH", path.toString());
        variables.put("HOME", home.toString());
        variables.put("JAVA_HOME", System.getProperty("java.home"));
        return Launcher.startCommandWithOnly(command, home, variables).await();
    }

    /**
     * A directory of links to every executable on this JVM's PATH but those named, the first of each name as the
     * shell would find it: the PATH as it is, less Maven and redis-server.
     */
    private static Path pathWithout(Path directory, String... names) throws IOException {
        Files.createDirectory(directory);
        for (String entry : System.getenv("PATH").split(":")) {
            Path dir = Path.of(entry);
            if (entry.isEmpty() || !Files.isDirectory(dir)) {
                continue;
            }
            try (Stream<Path> files = Files.list(dir)) {
                for (Path file : files.toList()) {
                    String name = file.getFileName().toString();
                    Path link = directory.resolve(name);
                    if (!List.of(names).contains(name) && !Files.exists(link, java.nio.file.LinkOption.NOFOLLOW_LINKS)
                            && Files.isRegularFile(file) && Files.isExecutable(file)) {
                        Files.createSymbolicLink(link, file);
                    }
                }
            }
        }
        assertThat(directory.resolve("bash")).exists();
        return directory;
    }

    /** The embedded-redis jar in the local repository, the one this test's class path has. */
    private static Path embeddedRedisJar() throws IOException {
        URL resource = ClassLoader.getSystemResource(EMBEDDED_RESOURCE);
        assertThat(resource).as(EMBEDDED_RESOURCE + " on the test class path").isNotNull();
        try {
            return Path.of(((JarURLConnection) resource.openConnection()).getJarFileURL().toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    private static Properties buildProperties() throws IOException {
        Properties properties = new Properties();
        try (var in = DistributionIT.class.getResourceAsStream("/dev/relock/cli/demo/demo-redis.properties")) {
            properties.load(in);
        }
        return properties;
    }

    private static String sha256(Path file) throws IOException {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The names in a directory, sorted; none if it does not exist. */
    private static List<String> names(Path directory) {
        if (!Files.isDirectory(directory)) {
            return List.of();
        }
        try (Stream<Path> files = Files.list(directory)) {
            return files.map(file -> file.getFileName().toString()).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
