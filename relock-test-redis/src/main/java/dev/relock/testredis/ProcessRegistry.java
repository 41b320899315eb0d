package dev.relock.testredis;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/**
 * The redis-server processes this JVM started, the scratch directories they live in, and the two ways they are
 * cleaned up when a test does not close them.
 *
 * <p>Design notes:
 * <ul>
 *   <li>One instance per JVM, created on first use by {@link #instance()}. Creating it makes the base directory
 *       {@code ${java.io.tmpdir}/relock-redis-<jvm pid>-<random>}, installs a shutdown hook and starts the reaper.
 *       Every file the fixture writes (server directories, the extracted embedded binary, the registry file) is
 *       under the base directory, so deleting it deletes everything.</li>
 *   <li>Normal JVM exit: the shutdown hook SIGKILLs every {@link RedisProcess} not yet closed and deletes the base
 *       directory. SIGKILLed JVM: the reaper ({@code reaper.sh}, a {@code sh} child polling once a second) sees the
 *       JVM gone, SIGKILLs every pid in the registry file that is still a redis-server on its port or directory,
 *       and deletes the base directory. The reaper also exits by itself after a normal exit.</li>
 *   <li>The registry file {@code base/servers} only grows: one line {@code "pid port directory"} is appended for
 *       every launch, before the launch waits for the server, so a JVM killed mid-start still leaves a record.</li>
 *   <li>{@code reservedPorts} holds the ports of every open process, running or not, so a new server never takes
 *       the port a stopped one will be restarted on.</li>
 *   <li>All mutable state is guarded by {@code this}. The shutdown hook copies the live set under the lock and
 *       kills outside it.</li>
 * </ul>
 */
final class ProcessRegistry {

    private static final String REAPER_SCRIPT = "reaper.sh";
    private static final int MAX_PORT_PICKS = 20;

    private static ProcessRegistry instance; // guarded by ProcessRegistry.class

    private final Path baseDirectory;
    private final Path registryFile;
    private final Process reaper;

    private final Set<RedisProcess> live = new LinkedHashSet<>(); // guarded by this
    private final Set<Integer> reservedPorts = new HashSet<>(); // guarded by this
    private boolean exiting; // guarded by this

    private ProcessRegistry(Path baseDirectory) throws IOException {
        this.baseDirectory = baseDirectory;
        this.registryFile = baseDirectory.resolve("servers");
        Files.createFile(registryFile);
        Runtime.getRuntime().addShutdownHook(new Thread(this::onJvmExit, "relock-redis-cleanup"));
        this.reaper = startReaper(ProcessHandle.current().pid(), baseDirectory);
    }

    /** Returns the registry of this JVM, creating its base directory, shutdown hook and reaper on first call. */
    static synchronized ProcessRegistry instance() {
        if (instance == null) {
            long jvmPid = ProcessHandle.current().pid();
            try {
                Path tmp = Path.of(System.getProperty("java.io.tmpdir"));
                instance = new ProcessRegistry(Files.createTempDirectory(tmp, "relock-redis-" + jvmPid + "-"));
            } catch (IOException e) {
                throw new UncheckedIOException("cannot create the relock-redis scratch directory", e);
            }
        }
        return instance;
    }

    Path baseDirectory() {
        return baseDirectory;
    }

    /** The pid of the orphan reaper, for tests. */
    long reaperPid() {
        return reaper.pid();
    }

    /** The processes created and not yet closed, running or not; for leak checks in tests. */
    synchronized List<RedisProcess> openProcesses() {
        return List.copyOf(live);
    }

    /** Creates a fresh, empty directory under the base directory. */
    Path newDirectory(String prefix) {
        try {
            return Files.createTempDirectory(baseDirectory, prefix);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a directory under " + baseDirectory, e);
        }
    }

    /** Records a process that may be started; it stays recorded until {@link #remove}. */
    synchronized void add(RedisProcess process) {
        if (exiting) {
            throw new IllegalStateException("the JVM is shutting down; no new redis-server may be created");
        }
        live.add(process);
    }

    /** Forgets a closed process and frees its port for reuse. */
    synchronized void remove(RedisProcess process, int port) {
        live.remove(process);
        reservedPorts.remove(port);
    }

    /**
     * Reserves {@code port} for one process of this JVM.
     *
     * @return false if another open process of this JVM already holds it
     */
    synchronized boolean reservePort(int port) {
        return reservedPorts.add(port);
    }

    synchronized void releasePort(int port) {
        reservedPorts.remove(port);
    }

    /**
     * Picks a loopback port that nothing listened on a moment ago and no open process of this JVM holds, and
     * reserves it. Another program may still take it before redis-server binds it: callers retry on
     * "Address already in use".
     */
    synchronized int reserveFreePort() {
        for (int i = 0; i < MAX_PORT_PICKS; i++) {
            int port;
            try (ServerSocket socket = new ServerSocket()) {
                socket.bind(new InetSocketAddress(InetAddress.getByName(RedisProcess.HOST), 0));
                port = socket.getLocalPort();
            } catch (IOException e) {
                throw new UncheckedIOException("cannot bind a loopback socket to find a free port", e);
            }
            if (reservedPorts.add(port)) {
                return port;
            }
        }
        throw new IllegalStateException("no free loopback port found in " + MAX_PORT_PICKS + " tries");
    }

    /** Appends a launch to the registry file that the reaper reads. Call right after the process started. */
    synchronized void launched(long pid, int port, Path directory) {
        String line = pid + " " + port + " " + directory + "\n";
        try {
            Files.writeString(registryFile, line, StandardCharsets.UTF_8, StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot record redis-server pid " + pid + " in " + registryFile, e);
        }
    }

    private void onJvmExit() {
        List<RedisProcess> remaining;
        synchronized (this) {
            exiting = true;
            remaining = new ArrayList<>(live);
        }
        for (RedisProcess process : remaining) {
            process.killForJvmExit();
        }
        deleteTree(baseDirectory);
    }

    /**
     * Starts {@code reaper.sh} for a JVM and base directory; the registry file it reads is {@code base/servers}.
     * Package-private so that tests can run it against a stand-in JVM.
     */
    static Process startReaper(long jvmPid, Path baseDirectory) throws IOException {
        byte[] script;
        try (InputStream in = ProcessRegistry.class.getResourceAsStream(REAPER_SCRIPT)) {
            if (in == null) {
                throw new IllegalStateException("resource " + REAPER_SCRIPT + " is missing from the classpath");
            }
            script = in.readAllBytes();
        }
        // The script arrives on stdin (sh -s), so the reaper's command line is short and names no redis-server.
        Process reaper = new ProcessBuilder("sh", "-s", String.valueOf(jvmPid),
                baseDirectory.toString())
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        try (OutputStream stdin = reaper.getOutputStream()) {
            stdin.write(script);
        }
        return reaper;
    }

    /** Deletes {@code root} and everything under it; missing files and failures to delete are ignored. */
    static void deleteTree(Path root) {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(root)) {
            paths.sorted(Comparator.reverseOrder()).forEach(path -> {
                try {
                    Files.deleteIfExists(path);
                } catch (IOException ignored) {
                    // best effort: the reaper removes whatever is left once the JVM is gone
                }
            });
        } catch (IOException | UncheckedIOException ignored) {
            // a file vanished while walking (a process still writing): best effort, as above
        }
    }
}
