package dev.relock.testredis;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.channels.Channels;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * One redis-server: its directory, configuration file, port and operating-system process, across restarts.
 *
 * <p>Design notes:
 * <ul>
 *   <li>The building block of every topology: {@link RedisServer} wraps one; sets of masters, Sentinel and Cluster
 *       fixtures are meant to own several. It knows nothing about roles, only about one process.</li>
 *   <li>The directory and the port belong to this object for its whole life. {@link #restart()} reuses both, which
 *       is what lets append-only data survive {@link #kill()}. An automatically chosen port may change between the
 *       attempts of the first start (when another program grabbed it) and is fixed once a start succeeded.</li>
 *   <li>The configuration file is written from {@link #directives} before every launch until the first start
 *       succeeded; afterwards it is left as the server left it, so what CONFIG REWRITE or a sentinel wrote into it
 *       (a new {@code replicaof}, a new monitored master) survives {@link #restart()}, as on a real host.
 *       redis-server is run as {@code redis-server <dir>/redis.conf [--sentinel]} with the directory as working
 *       directory.</li>
 *   <li>Lifecycle methods are {@code synchronized}; every field changes only under that lock. {@code process},
 *       {@code port} and {@code paused} are also {@code volatile}: the JVM shutdown hook SIGKILLs the process
 *       without the lock (a thread stuck in {@link #start()} must not delay JVM exit), and the getters never wait
 *       for a start to finish.</li>
 *   <li>{@link #execute} takes the lock only to fetch the admin connection and sends the command outside it, so
 *       a slow command (DEBUG SLEEP) in one thread never blocks {@link #kill()} or {@link #pause()} in another.
 *       Closing the connection under such a command makes that command fail. A connection the server closed
 *       (CLIENT KILL, as sentinels send when they reconfigure a node) is replaced on the next command.</li>
 *   <li>The fixture connects to its port only after its own process logged "Ready to accept connections" for this
 *       launch, i.e. after it bound the port, so the fixture never sends a command to somebody else's server; it
 *       still checks that INFO reports our pid before calling the server started.</li>
 * </ul>
 */
final class RedisProcess {

    /** Every server binds this loopback address only. */
    static final String HOST = "127.0.0.1";

    /**
     * System property that, when set, refuses every new server in this JVM; its value says why. The build sets it
     * for the unit-test run ({@code mvn test}), so a test that starts servers without being an integration test
     * fails at once instead of slowing that run down.
     */
    static final String REFUSE_PROPERTY = "relock.redis.refuse";

    /** Directives this class writes itself; callers may not pass them in {@code directives}. */
    static final Set<String> OWN_DIRECTIVES = Set.of("port", "bind", "daemonize", "dir", "logfile", "requirepass");

    private static final String READY_LINE = "Ready to accept connections";
    /** Sentinels never log {@link #READY_LINE}; this line follows the opening of their port. */
    private static final String SENTINEL_READY_LINE = "Sentinel ID is";
    /** Files {@link #restartWithoutData()} keeps; everything else in the directory is persisted data. */
    private static final Set<String> KEPT_FILES = Set.of("redis.conf", "redis.log", "console.log", "nodes.conf");
    private static final String PORT_BUSY_LINE = "Address already in use";
    private static final int MAX_AUTOMATIC_PORT_ATTEMPTS = 5;
    private static final int LOG_TAIL_LINES = 25;

    private final ProcessRegistry registry;
    private final RedisBinary binary;
    private final Path directory;
    private final Path configFile;
    private final Path logFile;
    private final Path consoleFile;
    private final String password;
    private final Map<String, String> directives;
    private final boolean sentinel;

    private volatile int port; // written under this; 0 until chosen
    private boolean portFixed; // guarded by this
    private boolean startedOnce; // guarded by this; from then on the server owns its configuration file
    private volatile Process process; // written under this; null before the first launch
    private volatile boolean paused; // written under this
    private AdminConnection admin; // guarded by this; null when not open
    private boolean closed; // guarded by this

    /**
     * Creates the directory and reserves the port; starts nothing.
     *
     * @param requestedPort a loopback port, or 0 to pick a free one at start
     * @param password the {@code requirepass} value, or null for none
     * @param directives further redis.conf lines, key to value, written verbatim as {@code key value}; no key of
     *     {@link #OWN_DIRECTIVES}. A key may hold a space to repeat a directive ({@code "sentinel monitor"}).
     * @param sentinel true to run it as a Sentinel ({@code --sentinel})
     */
    RedisProcess(RedisBinary binary, int requestedPort, String password, Map<String, String> directives,
            boolean sentinel) {
        String refusal = System.getProperty(REFUSE_PROPERTY, "");
        if (!refusal.isBlank()) {
            throw new IllegalStateException("no redis-server may start in this JVM (" + REFUSE_PROPERTY + "): "
                    + refusal);
        }
        for (String key : directives.keySet()) {
            if (OWN_DIRECTIVES.contains(key)) {
                throw new IllegalArgumentException("directive '" + key + "' is set by the fixture");
            }
        }
        this.registry = ProcessRegistry.instance();
        this.binary = binary;
        this.password = password;
        this.directives = new LinkedHashMap<>(directives);
        this.sentinel = sentinel;
        this.directory = registry.newDirectory("server-");
        this.configFile = directory.resolve("redis.conf");
        this.logFile = directory.resolve("redis.log");
        this.consoleFile = directory.resolve("console.log");
        if (requestedPort != 0 && !registry.reservePort(requestedPort)) {
            ProcessRegistry.deleteTree(directory);
            throw new IllegalStateException("port " + requestedPort + " is already used by another server of this JVM");
        }
        this.port = requestedPort;
        this.portFixed = requestedPort != 0;
        registry.add(this);
    }

    RedisBinary binary() {
        return binary;
    }

    Path directory() {
        return directory;
    }

    int port() {
        return port;
    }

    /** The pid of the current or last launch, or -1 before the first. */
    long pid() {
        Process current = process;
        return current == null ? -1 : current.pid();
    }

    boolean isRunning() {
        Process current = process;
        return current != null && current.isAlive();
    }

    boolean isPaused() {
        return paused && isRunning();
    }

    /**
     * Launches redis-server and returns once it answers as itself; on an automatically chosen port that another
     * program took, tries again on new ports; on a fixed port that is busy, retries it briefly.
     *
     * @throws IllegalStateException if it is already running, was closed, or did not come up (the message ends with
     *     the tail of the server's log)
     */
    synchronized void start() {
        requireOpen();
        if (isRunning()) {
            throw new IllegalStateException("redis-server on port " + port + " is already running");
        }
        long deadline = System.nanoTime() + TestTimeouts.scaled(Duration.ofSeconds(10)).toNanos();
        long busyPortDeadline = System.nanoTime() + TestTimeouts.scaled(Duration.ofMillis(1500)).toNanos();
        for (int attempt = 1; ; attempt++) {
            if (port == 0) {
                port = registry.reserveFreePort();
            }
            if (launch(deadline)) {
                portFixed = true;
                startedOnce = true;
                return;
            }
            if (!portFixed && attempt < MAX_AUTOMATIC_PORT_ATTEMPTS) {
                registry.releasePort(port);
                port = 0;
            } else if (portFixed && System.nanoTime() - busyPortDeadline < 0) {
                waitBriefly(Duration.ofMillis(100)); // a port freed a moment ago may still be held by the dying owner
            } else {
                throw new IllegalStateException("redis-server could not bind " + HOST + ":" + port
                        + ": address already in use" + logTails());
            }
        }
    }

    /**
     * Launches once and waits until the server answers or exits.
     *
     * @return true once it answers as itself, false if it exited because its port was taken
     */
    private boolean launch(long deadline) {
        if (!startedOnce) {
            writeConfigFile();
        }
        long logOffset = sizeOf(logFile);
        List<String> command = sentinel
                ? List.of(binary.path().toString(), configFile.toString(), "--sentinel")
                : List.of(binary.path().toString(), configFile.toString());
        String readyLine = sentinel ? SENTINEL_READY_LINE : READY_LINE;
        Process started;
        try {
            started = new ProcessBuilder(command)
                    .directory(directory.toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(consoleFile.toFile()))
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                    .start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + binary.path(), e);
        }
        process = started;
        paused = false;
        registry.launched(started.pid(), port, directory);
        while (true) {
            if (!started.isAlive()) {
                if (readFrom(logFile, logOffset).contains(PORT_BUSY_LINE)) {
                    return false;
                }
                throw new IllegalStateException("redis-server (" + binary.path() + ") on port " + port
                        + " exited with code " + started.exitValue() + " while starting" + logTails());
            }
            if (readFrom(logFile, logOffset).contains(readyLine) && answersAsItself(started.pid())) {
                return true;
            }
            if (System.nanoTime() - deadline > 0) {
                destroyAndWait(started, true);
                throw new IllegalStateException("redis-server on port " + port + " did not answer PING within "
                        + TestTimeouts.scaled(Duration.ofSeconds(10)) + logTails());
            }
            waitBriefly(Duration.ofMillis(10));
        }
    }

    /** True if the server on our port answers INFO with our pid; false if it does not answer yet. */
    private boolean answersAsItself(long pid) {
        String info;
        try {
            info = admin().execute("INFO", "server");
        } catch (RuntimeException notYet) {
            closeAdmin();
            return false;
        }
        long reported = -1;
        for (String line : info.split("\r?\n")) {
            if (line.startsWith("process_id:")) {
                reported = Long.parseLong(line.substring("process_id:".length()).trim());
            }
        }
        if (reported != pid) {
            closeAdmin();
            destroyAndWait(process, true);
            throw new IllegalStateException("the server on " + HOST + ":" + port + " reports pid " + reported
                    + ", not the pid " + pid + " the fixture started");
        }
        return true;
    }

    /** SIGTERM (after SIGCONT if paused), then SIGKILL if it has not exited within the (scaled) 10 s. No-op if not running. */
    synchronized void stop() {
        closeAdmin();
        Process current = process;
        if (current == null || !current.isAlive()) {
            return;
        }
        if (paused) {
            signal(current, "CONT");
            paused = false;
        }
        destroyAndWait(current, false);
    }

    /** SIGKILL and wait for exit. No-op if not running. */
    synchronized void kill() {
        closeAdmin();
        Process current = process;
        paused = false;
        if (current != null && current.isAlive()) {
            destroyAndWait(current, true);
        }
    }

    /** SIGSTOP; returns once the kernel reports the process stopped. No-op if already paused. */
    synchronized void pause() {
        Process current = requireRunning();
        if (paused) {
            return;
        }
        signal(current, "STOP");
        awaitStopped(current, true);
        paused = true;
    }

    /** SIGCONT; returns once the kernel reports the process running again. No-op if not paused. */
    synchronized void resume() {
        Process current = process;
        if (!paused || current == null || !current.isAlive()) {
            paused = false;
            return;
        }
        signal(current, "CONT");
        awaitStopped(current, false);
        paused = false;
    }

    /** Stops the server if it runs, then starts it again on the same port with the same directory. */
    synchronized void restart() {
        requireOpen();
        stop();
        start();
    }

    /**
     * Stops the server if it runs, deletes its persisted data (every file of the directory but the configuration,
     * the logs and a cluster's {@code nodes.conf}) and starts it again: it comes back empty, as a host whose disk
     * was lost or that never persisted.
     */
    synchronized void restartWithoutData() {
        requireOpen();
        stop();
        try (var entries = Files.list(directory)) {
            for (Path entry : (Iterable<Path>) entries::iterator) {
                if (!KEPT_FILES.contains(entry.getFileName().toString())) {
                    ProcessRegistry.deleteTree(entry);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete the data in " + directory, e);
        }
        start();
    }

    /**
     * Sends one command through the fixture's own connection.
     *
     * @throws IllegalStateException if the server is not running or is paused
     * @see AdminConnection#execute(String...)
     */
    String execute(String... command) {
        return usableAdmin().execute(command);
    }

    /**
     * As {@link #execute}, but returns the reply as Java values: arrays as lists (of lists), integers as Long.
     *
     * @see AdminConnection#reply(String...)
     */
    Object reply(String... command) {
        return usableAdmin().reply(command);
    }

    private AdminConnection usableAdmin() {
        synchronized (this) {
            requireRunning();
            if (paused) {
                throw new IllegalStateException("redis-server on port " + port + " is paused; resume() it first");
            }
            return admin();
        }
    }

    /** Stops the server if it runs and deletes its directory. Idempotent. */
    synchronized void close() {
        if (closed) {
            return;
        }
        try {
            stop();
        } finally {
            closed = true;
            registry.remove(this, port);
            ProcessRegistry.deleteTree(directory);
        }
    }

    /** For the JVM shutdown hook: SIGKILL without taking the lock, wait briefly. */
    void killForJvmExit() {
        Process current = process;
        if (current != null && current.isAlive()) {
            current.destroyForcibly();
            try {
                current.waitFor(2, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    // ---- internals; callers hold the lock unless noted ----

    /** The fixture's connection, opened anew if there is none or the server closed it (e.g. CLIENT KILL). */
    private AdminConnection admin() {
        if (admin != null && !admin.isOpen()) {
            closeAdmin();
        }
        if (admin == null) {
            admin = AdminConnection.open(HOST, port, password);
        }
        return admin;
    }

    private void closeAdmin() {
        if (admin != null) {
            try {
                admin.close();
            } finally {
                admin = null;
            }
        }
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("redis-server in " + directory + " was closed");
        }
    }

    private Process requireRunning() {
        requireOpen();
        Process current = process;
        if (current == null || !current.isAlive()) {
            throw new IllegalStateException("redis-server on port " + port + " is not running");
        }
        return current;
    }

    private void writeConfigFile() {
        StringBuilder text = new StringBuilder("# written by dev.relock.testredis before every start\n")
                .append("port ").append(port).append('\n')
                .append("bind ").append(HOST).append('\n')
                .append("daemonize no\n")
                .append("dir ").append(quoted(directory.toString())).append('\n')
                .append("logfile ").append(quoted(logFile.toString())).append('\n');
        if (password != null) {
            text.append("requirepass ").append(quoted(password)).append('\n');
        }
        directives.forEach((key, value) -> text.append(key).append(' ').append(value).append('\n'));
        try {
            Files.writeString(configFile, text, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + configFile, e);
        }
    }

    /** A redis.conf double-quoted string: backslash escapes for backslash, quote and line breaks. */
    static String quoted(String value) {
        StringBuilder out = new StringBuilder("\"");
        for (char c : value.toCharArray()) {
            switch (c) {
                case '\\' -> out.append("\\\\");
                case '"' -> out.append("\\\"");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                default -> out.append(c);
            }
        }
        return out.append('"').toString();
    }

    private static void destroyAndWait(Process target, boolean forcibly) {
        Duration timeout = TestTimeouts.scaled(Duration.ofSeconds(10));
        if (forcibly) {
            target.destroyForcibly();
        } else {
            target.destroy();
        }
        try {
            if (!target.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                target.destroyForcibly();
                if (!target.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                    throw new IllegalStateException("redis-server pid " + target.pid() + " survived SIGKILL for " + timeout);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            target.destroyForcibly();
            throw new IllegalStateException("interrupted while waiting for redis-server pid " + target.pid()
                    + " to exit; sent SIGKILL", e);
        }
    }

    /** Sends a signal Java cannot send itself (STOP, CONT) through the shell's kill builtin. */
    private static void signal(Process target, String signal) {
        try {
            Process kill = new ProcessBuilder("sh", "-c", "kill -s " + signal + " " + target.pid())
                    .redirectErrorStream(true)
                    .start();
            kill.getOutputStream().close();
            if (!kill.waitFor(TestTimeouts.scaled(Duration.ofSeconds(5)).toMillis(), TimeUnit.MILLISECONDS)) {
                kill.destroyForcibly();
                throw new IllegalStateException("kill -s " + signal + " " + target.pid() + " did not return");
            }
            if (kill.exitValue() != 0) {
                String output = new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
                throw new IllegalStateException("kill -s " + signal + " " + target.pid() + " failed: " + output);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run kill -s " + signal + " " + target.pid(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while sending SIG" + signal + " to pid " + target.pid(), e);
        }
    }

    /**
     * Polls /proc/pid/stat until the process is (or is no longer) in the stopped state 'T'. Without /proc (not
     * Linux) it returns at once: the signal was sent, only its arrival is not confirmed.
     */
    private static void awaitStopped(Process target, boolean stopped) {
        Path stat = Path.of("/proc", String.valueOf(target.pid()), "stat");
        if (!Files.exists(stat)) {
            return;
        }
        long deadline = System.nanoTime() + TestTimeouts.scaled(Duration.ofSeconds(5)).toNanos();
        while (true) {
            String text;
            try {
                text = Files.readString(stat, StandardCharsets.UTF_8);
            } catch (IOException gone) {
                return; // the process exited; callers see that through isRunning()
            }
            // "pid (comm) state ...": comm may contain spaces and parentheses, so read after the last ')'
            char state = text.charAt(text.lastIndexOf(')') + 2);
            if ((state == 'T') == stopped) {
                return;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("pid " + target.pid() + " is in state '" + state + "', expected "
                        + (stopped ? "stopped" : "running") + " after the signal");
            }
            waitBriefly(Duration.ofMillis(2));
        }
    }

    private static void waitBriefly(Duration duration) {
        LockSupport.parkNanos(duration.toNanos());
        if (Thread.interrupted()) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for redis-server");
        }
    }

    private static long sizeOf(Path file) {
        try {
            return Files.exists(file) ? Files.size(file) : 0;
        } catch (IOException e) {
            return 0;
        }
    }

    /** The text of {@code file} from byte {@code offset} on; empty if the file does not exist yet. */
    private static String readFrom(Path file, long offset) {
        if (!Files.exists(file)) {
            return "";
        }
        try (SeekableByteChannel channel = Files.newByteChannel(file)) {
            channel.position(Math.min(offset, channel.size()));
            try (InputStream in = Channels.newInputStream(channel)) {
                return new String(in.readAllBytes(), StandardCharsets.UTF_8);
            }
        } catch (IOException e) {
            return "";
        }
    }

    /** The last lines of the log file and of the console output, to end an exception message with. */
    private String logTails() {
        return "\n--- tail of " + logFile + " ---\n" + tail(logFile)
                + "\n--- tail of " + consoleFile + " ---\n" + tail(consoleFile);
    }

    private static String tail(Path file) {
        List<String> lines = Arrays.asList(readFrom(file, 0).split("\n"));
        return String.join("\n", lines.subList(Math.max(0, lines.size() - LOG_TAIL_LINES), lines.size()));
    }

    @Override
    public String toString() {
        return "redis-server " + HOST + ":" + port + " (pid " + pid() + ", " + directory + ")";
    }
}
