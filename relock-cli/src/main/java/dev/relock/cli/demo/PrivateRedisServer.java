package dev.relock.cli.demo;

import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.net.MalformedURLException;
import java.net.URISyntaxException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * A redis-server started for one demo run by the test fixture's {@code dev.relock.testredis.RedisServer} (free
 * loopback port, scratch directory, reaped if this JVM dies), stopped by {@link #close()}.
 *
 * <p>The fixture is on no command's class path, so {@code exec}, {@code list}, {@code inspect} and {@code unlock}
 * never carry it. Where it is not on the class path (the build's {@code target/relock-cli.jar}, an installed copy),
 * the demo opens {@code demo/relock-test-redis-VERSION.jar}, which the build puts beside {@code lib/}, in a class
 * loader of its own whose parent is the command line's (the fixture runs on the command line's Lettuce), and calls it
 * by reflection. If the fixture's {@code RedisBinary.installed()} finds no redis-server ({@code $RELOCK_REDIS_SERVER},
 * else on the PATH), the embedded-redis jar ({@link EmbeddedRedisJar}) joins that loader first, and the fixture
 * takes the binary from it as it does in the tests. Where the fixture is on the class path (the tests), it is used
 * as it is.
 *
 * <p>Started and closed by the demo's main thread only.
 */
final class PrivateRedisServer implements AutoCloseable {

    private static final String SERVER_CLASS = "dev.relock.testredis.RedisServer";
    private static final String BINARY_CLASS = "dev.relock.testredis.RedisBinary";

    private final AutoCloseable server;
    private final String uri;
    private final Path binaryPath;
    private final String binarySource;
    private final String binaryVersion;

    private PrivateRedisServer(AutoCloseable server, String uri, Path binaryPath, String binarySource,
            String binaryVersion) {
        this.server = server;
        this.uri = uri;
        this.binaryPath = binaryPath;
        this.binarySource = binarySource;
        this.binaryVersion = binaryVersion;
    }

    /**
     * Starts a server as the class comment says; {@code err} is told of a fetch.
     *
     * @throws IllegalStateException if no redis-server can be had or started; the message says why
     */
    static PrivateRedisServer start(PrintWriter err) throws InterruptedException {
        Class<?> serverType = load(fixtureLoader(err), SERVER_CLASS);
        AutoCloseable server = (AutoCloseable) invoke(serverType, null, "start");
        try {
            Object binary = invoke(serverType, server, "binary");
            return new PrivateRedisServer(server, (String) invoke(serverType, server, "uri"),
                    (Path) invoke(binary.getClass(), binary, "path"), (String) invoke(binary.getClass(), binary, "source"),
                    (String) invoke(binary.getClass(), binary, "version"));
        } catch (RuntimeException e) {
            closeQuietly(server, e);
            throw e;
        }
    }

    /** {@code redis://127.0.0.1:PORT}. */
    String uri() {
        return uri;
    }

    Path binaryPath() {
        return binaryPath;
    }

    /** Where the binary was found: {@code RELOCK_REDIS_SERVER}, {@code PATH} or {@code embedded-redis}. */
    String binarySource() {
        return binarySource;
    }

    /** As {@code redis-server --version} reports it, e.g. {@code 7.0.15}. */
    String binaryVersion() {
        return binaryVersion;
    }

    /** Stops the server and deletes its directory. */
    @Override
    public void close() {
        try {
            server.close();
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException("cannot stop the private redis-server at " + uri, e);
        }
    }

    private static ClassLoader fixtureLoader(PrintWriter err) throws InterruptedException {
        ClassLoader own = PrivateRedisServer.class.getClassLoader();
        if (own.getResource(SERVER_CLASS.replace('.', '/') + ".class") != null) {
            return own;
        }
        DemoArtifacts artifacts = DemoArtifacts.ofThisBuild();
        // never closed: the fixture's shutdown hook may still load classes from it as the JVM exits
        FixtureClassLoader loader = new FixtureClassLoader(fixtureJar(artifacts), own);
        Class<?> binaryType = load(loader, BINARY_CLASS);
        if (((Optional<?>) invoke(binaryType, null, "installed")).isEmpty()) {
            String none = "no redis-server is installed here (none on the PATH, $RELOCK_REDIS_SERVER unset)";
            if (!(Boolean) invoke(binaryType, null, "embeddedRunsHere")) {
                throw new IllegalStateException(none + ", and the embedded-redis one runs only on Linux x86-64, not "
                        + System.getProperty("os.name") + " " + System.getProperty("os.arch"));
            }
            try {
                loader.add(EmbeddedRedisJar.find(artifacts, System.getenv(), err));
            } catch (IllegalStateException e) {
                throw new IllegalStateException(none + ", and " + e.getMessage(), e);
            }
        }
        return loader;
    }

    /**
     * {@code demo/<fixture jar>} beside the directory of the command line's own classes: {@code target/demo} for the
     * build's {@code target/relock-cli.jar} or {@code target/classes}, {@code demo/} beside {@code lib/} for an
     * installed copy.
     */
    private static Path fixtureJar(DemoArtifacts artifacts) {
        Path classes;
        try {
            classes = Path.of(PrivateRedisServer.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException("cannot tell where the command line's classes are", e);
        }
        Path beside = classes.toAbsolutePath().getParent();
        List<Path> candidates = List.of(beside.resolve("demo").resolve(artifacts.fixtureJar()),
                beside.resolveSibling("demo").resolve(artifacts.fixtureJar()));
        return candidates.stream().filter(Files::isRegularFile).findFirst().orElseThrow(
                () -> new IllegalStateException("the fixture that runs it, " + artifacts.fixtureJar()
                        + ", is in neither " + candidates.get(0).getParent() + " nor " + candidates.get(1).getParent()
                        + " (an incomplete installation?)"));
    }

    private static Class<?> load(ClassLoader loader, String name) {
        try {
            return Class.forName(name, true, loader);
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException(name + " is missing from the fixture jar", e);
        }
    }

    /** {@code target.name()} through the public method of {@code type}; a static one if {@code target} is null. */
    private static Object invoke(Class<?> type, Object target, String name) {
        try {
            return type.getMethod(name).invoke(target);
        } catch (InvocationTargetException e) {
            if (e.getCause() instanceof RuntimeException failure) {
                throw failure;
            }
            if (e.getCause() instanceof Error error) {
                throw error;
            }
            throw new IllegalStateException(type.getSimpleName() + "." + name + "() failed", e.getCause());
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("the fixture jar has no " + type.getName() + "." + name
                    + "(): not the version this build of relock expects", e);
        }
    }

    private static void closeQuietly(AutoCloseable server, RuntimeException failure) {
        try {
            server.close();
        } catch (Exception e) {
            failure.addSuppressed(e);
        }
    }

    /** A loader to which the embedded-redis jar can be added once the fixture has said it is needed. */
    private static final class FixtureClassLoader extends URLClassLoader {

        static {
            registerAsParallelCapable();
        }

        FixtureClassLoader(Path fixtureJar, ClassLoader parent) {
            super("relock-demo-fixture", new URL[] {url(fixtureJar)}, parent);
        }

        void add(Path jar) {
            addURL(url(jar));
        }

        private static URL url(Path jar) {
            try {
                return jar.toUri().toURL();
            } catch (MalformedURLException e) {
                throw new IllegalStateException("cannot make a URL of " + jar, e);
            }
        }
    }
}
