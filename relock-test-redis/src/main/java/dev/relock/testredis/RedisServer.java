package dev.relock.testredis;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A real {@code redis-server} process for tests, on a loopback port, with its own temporary directory, that a test
 * can stop, kill, pause, resume and restart.
 *
 * <pre>{@code
 * try (RedisServer redis = RedisServer.builder().appendOnly(true).start()) {
 *     RedisClient client = RedisClient.create(redis.uri());
 *     ...
 *     redis.kill();     // SIGKILL
 *     redis.restart();  // same port, same directory: the append-only file brings the data back
 * }
 * }</pre>
 *
 * <p>What is true of every server:
 * <ul>
 *   <li>It listens on {@value #HOST} only, on a port picked free at start unless {@link Builder#port(int)} was
 *       given; the port never changes afterwards, across {@link #restart()}.</li>
 *   <li>It keeps its files (redis.conf, redis.log, the AOF or RDB) in {@link #directory()}, under this JVM's scratch
 *       directory {@code ${java.io.tmpdir}/relock-redis-<jvm pid>-<random>}. It saves no RDB snapshots unless a
 *       {@code save} directive is configured.</li>
 *   <li>{@link #close()} stops it and deletes the directory. A server never closed is SIGKILLed by a JVM shutdown
 *       hook, and if the JVM itself is SIGKILLed, by a small {@code sh} reaper process that watches the JVM.</li>
 *   <li>The fixture's own commands ({@link #execute}, {@link #flushAll()}, ...) go over one Lettuce connection
 *       per server, authenticated with the password, closed on stop, kill and restart and reopened on demand.</li>
 *   <li>Timeouts (10 s to start, 10 s to stop, 5 s per command) are multiplied by
 *       {@value TestTimeouts#FACTOR_PROPERTY}.</li>
 * </ul>
 *
 * <p>Threads: every method may be called from any thread. Lifecycle methods ({@link #stop()}, {@link #kill()},
 * {@link #pause()}, {@link #resume()}, {@link #restart()}, {@link #close()}) are serialized per server.
 * {@link #execute} does not hold that serialization while it waits for the reply, so a slow command in one thread
 * (e.g. {@code DEBUG SLEEP}) does not delay {@link #kill()} in another; that command then fails.
 */
public final class RedisServer implements AutoCloseable {

    /** The only address servers bind to. */
    public static final String HOST = RedisProcess.HOST;

    private final RedisProcess process;
    private final String password;

    private RedisServer(RedisProcess process, String password) {
        this.process = process;
        this.password = password;
    }

    /** A builder for a server; nothing runs until {@link Builder#start()}. */
    public static Builder builder() {
        return new Builder();
    }

    /** Starts a server with all defaults: resolved binary, free port, no password, no persistence. */
    public static RedisServer start() {
        return builder().start();
    }

    /** Always {@value #HOST}. */
    public String host() {
        return HOST;
    }

    /** The loopback port, the same for the server's whole life. */
    public int port() {
        return process.port();
    }

    /** {@code redis://127.0.0.1:PORT}, without credentials even when a password is set. */
    public String uri() {
        return "redis://" + HOST + ":" + port();
    }

    /**
     * {@code redis://:PASSWORD@127.0.0.1:PORT} with the password percent-encoded, or {@link #uri()} when no password
     * is set. Lettuce's {@code RedisURI.create} accepts both.
     */
    public String uriWithPassword() {
        return password == null ? uri() : "redis://:" + percentEncoded(password) + "@" + HOST + ":" + port();
    }

    /** The {@code requirepass} password, if one was set. */
    public Optional<String> password() {
        return Optional.ofNullable(password);
    }

    /** The binary this server runs. */
    public RedisBinary binary() {
        return process.binary();
    }

    /** The pid of the current process, or of the last one after {@link #stop()} or {@link #kill()}. */
    public long pid() {
        return process.pid();
    }

    /** The server's working directory (redis.conf, redis.log, persistence files); deleted by {@link #close()}. */
    public Path directory() {
        return process.directory();
    }

    /** True while the process is alive, paused or not. */
    public boolean isRunning() {
        return process.isRunning();
    }

    /** True while the process is alive and stopped by {@link #pause()}. */
    public boolean isPaused() {
        return process.isPaused();
    }

    /**
     * Stops the server with SIGTERM (after SIGCONT if paused) and waits for it to exit; SIGKILL if it takes more than
     * 10 s. With only the default configuration it writes nothing on the way out (no save points), but the append-only
     * file, if on, is complete. Does nothing if it is not running.
     */
    public void stop() {
        process.stop();
    }

    /** Kills the server with SIGKILL and waits for it to exit, as a crash would. Does nothing if it is not running. */
    public void kill() {
        process.kill();
    }

    /**
     * Freezes the server with SIGSTOP: its port still accepts connections but nothing is answered, as on a stalled
     * host. Returns once the kernel reports the process stopped. Does nothing if already paused.
     *
     * @throws IllegalStateException if the server is not running
     */
    public void pause() {
        process.pause();
    }

    /** Thaws a paused server with SIGCONT; commands sent meanwhile are answered now. Does nothing if not paused. */
    public void resume() {
        process.resume();
    }

    /**
     * Stops the server if it runs (as {@link #stop()}) and starts it again on the same port with the same directory
     * and configuration, so append-only data survives. Works after {@link #stop()} and after {@link #kill()}. The
     * configuration file is the one the server last wrote itself: changes saved with {@code CONFIG REWRITE} (or by
     * a sentinel) survive, {@code CONFIG SET} alone does not.
     *
     * @throws IllegalStateException if it was closed or does not come up
     */
    public void restart() {
        process.restart();
    }

    /**
     * Stops the server if it runs, deletes its persisted data (append-only file, RDB snapshot) and starts it again on
     * the same port: it comes back empty, as a host that lost its disk, or as any server without persistence after
     * {@link #restart()}. Configuration files written by the server itself ({@code CONFIG REWRITE}, a cluster's
     * {@code nodes.conf}) are kept.
     *
     * @throws IllegalStateException if it was closed or does not come up
     */
    public void restartWithoutData() {
        process.restartWithoutData();
    }

    /** Runs {@code FLUSHALL}: every key of every database is removed. */
    public void flushAll() {
        execute("FLUSHALL");
    }

    /** Runs {@code SCRIPT FLUSH}: the server forgets every cached Lua script, so EVALSHA answers NOSCRIPT. */
    public void scriptFlush() {
        execute("SCRIPT", "FLUSH");
    }

    /**
     * Sends any command and waits for its reply, e.g. {@code execute("ACL", "SETUSER", "bob", "on", ">pw", "~*",
     * "+@all")} or {@code execute("CONFIG", "SET", "maxmemory", "10mb")}.
     *
     * @return the reply as text: a status or bulk string as is, an integer in decimal, nil as {@code null}, an array
     *     as {@code [a, b, [c]]}
     * @throws io.lettuce.core.RedisCommandExecutionException if the server answers with an error
     * @throws io.lettuce.core.RedisCommandTimeoutException if no reply comes within 5 s (scaled)
     * @throws IllegalStateException if the server is not running or is paused
     */
    public String execute(String... command) {
        return process.execute(command);
    }

    /** As {@link #execute}, but the reply as Java values (lists for arrays, Long for integers), for the fixtures. */
    Object reply(String... command) {
        return process.reply(command);
    }

    /** Stops the server if it runs and deletes its directory. Idempotent; other methods then throw or do nothing. */
    @Override
    public void close() {
        process.close();
    }

    /** Closes every server, even when closing one fails; the first failure is thrown, later ones suppressed. */
    static void closeAll(Iterable<RedisServer> servers) {
        RuntimeException failure = null;
        for (RedisServer server : servers) {
            try {
                server.close();
            } catch (RuntimeException e) {
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    /** Closes every server after {@code cause} interrupted a start; failures to close are added to {@code cause}. */
    static void closeAll(Iterable<RedisServer> servers, Throwable cause) {
        try {
            closeAll(servers);
        } catch (RuntimeException cleanup) {
            cause.addSuppressed(cleanup);
        }
    }

    @Override
    public String toString() {
        return "RedisServer[" + HOST + ":" + port() + ", pid " + pid() + ", " + directory() + "]";
    }

    private static String percentEncoded(String text) {
        StringBuilder out = new StringBuilder();
        for (byte b : text.getBytes(StandardCharsets.UTF_8)) {
            char c = (char) (b & 0xff);
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || "-._~".indexOf(c) >= 0) {
                out.append(c);
            } else {
                out.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
                        .append(Character.toUpperCase(Character.forDigit(c & 0xf, 16)));
            }
        }
        return out.toString();
    }

    /**
     * Options for one server. Not thread-safe; each {@link #start()} starts a new, independent server with the
     * options set so far.
     */
    public static final class Builder {

        private RedisBinary binary;
        private int port;
        private String password;
        private boolean appendOnly;
        private final Map<String, String> config = new LinkedHashMap<>();

        private Builder() {
        }

        /** The executable to run; default {@link RedisBinary#resolve()}. */
        public Builder binary(RedisBinary binary) {
            this.binary = Objects.requireNonNull(binary, "binary");
            return this;
        }

        /**
         * A fixed loopback port; default: a free one picked at start (and retried on another if somebody takes it
         * first). A fixed port that is busy fails the start after a brief retry.
         */
        public Builder port(int port) {
            if (port < 1 || port > 65535) {
                throw new IllegalArgumentException("port must be 1..65535, was " + port);
            }
            this.port = port;
            return this;
        }

        /** Sets {@code requirepass}; the fixture's own connection authenticates with it. */
        public Builder password(String password) {
            Objects.requireNonNull(password, "password");
            if (password.isEmpty()) {
                throw new IllegalArgumentException("password must not be empty");
            }
            this.password = password;
            return this;
        }

        /**
         * Turns on the append-only file with {@code appendfsync always}, so every acknowledged write survives
         * {@link RedisServer#kill()} and {@link RedisServer#restart()}. Default off.
         */
        public Builder appendOnly(boolean appendOnly) {
            this.appendOnly = appendOnly;
            return this;
        }

        /**
         * Adds (or replaces) a redis.conf directive, written verbatim as the line {@code key value}: quote the value
         * as redis.conf wants, e.g. {@code config("save", "\"\"")} or {@code config("save", "60 1")}. Overrides the
         * defaults {@code save ""}, {@code protected-mode no}, {@code appendfsync always} and, on Redis 7+,
         * {@code enable-debug-command local}.
         *
         * @throws IllegalArgumentException for directives the fixture sets itself: {@code port}, {@code bind},
         *     {@code daemonize}, {@code dir}, {@code logfile} and {@code requirepass} (use {@link #port(int)} and
         *     {@link #password(String)})
         */
        public Builder config(String key, String value) {
            Objects.requireNonNull(value, "value");
            String directive = Objects.requireNonNull(key, "key").trim().toLowerCase(Locale.ROOT);
            if (directive.isEmpty() || directive.chars().anyMatch(Character::isWhitespace)) {
                throw new IllegalArgumentException("not a directive name: '" + key + "'");
            }
            if (RedisProcess.OWN_DIRECTIVES.contains(directive)) {
                throw new IllegalArgumentException("'" + directive + "' is set by the fixture; use the builder method");
            }
            if (value.indexOf('\n') >= 0 || value.indexOf('\r') >= 0) {
                throw new IllegalArgumentException("a directive value must be one line: " + value);
            }
            config.put(directive, value);
            return this;
        }

        /** As {@link #config}, unless the directive was set already: for defaults of the topology fixtures. */
        Builder configIfAbsent(String key, String value) {
            return config.containsKey(key) ? this : config(key, value);
        }

        /** A builder with the options set so far; changes to either do not affect the other. */
        Builder copy() {
            Builder copy = new Builder();
            copy.binary = binary;
            copy.port = port;
            copy.password = password;
            copy.appendOnly = appendOnly;
            copy.config.putAll(config);
            return copy;
        }

        /**
         * Starts the server and returns once it answers PING.
         *
         * @throws IllegalStateException if it does not come up within 10 s (scaled); the message ends with the tail
         *     of its log
         */
        public RedisServer start() {
            RedisBinary chosen = binary != null ? binary : RedisBinary.resolve();
            Map<String, String> directives = new LinkedHashMap<>();
            directives.put("protected-mode", "no");
            directives.put("save", "\"\"");
            directives.put("appendonly", appendOnly ? "yes" : "no");
            if (appendOnly) {
                directives.put("appendfsync", "always");
            }
            if (chosen.majorVersion() >= 7) {
                // Redis 7 refuses DEBUG (SLEEP, SET-ACTIVE-EXPIRE, ...) by default; tests use it, over loopback
                directives.put("enable-debug-command", "local");
            }
            directives.putAll(config);
            return launch(chosen, port, password, directives, false);
        }
    }

    /**
     * Starts a process with exactly {@code directives} (no defaults added) and wraps it; closes it if the start fails.
     * For the topology fixtures, which also start sentinels this way.
     */
    static RedisServer launch(RedisBinary binary, int port, String password, Map<String, String> directives,
            boolean sentinel) {
        RedisProcess process = new RedisProcess(binary, port, password, directives, sentinel);
        try {
            process.start();
        } catch (RuntimeException | Error e) {
            try {
                process.close();
            } catch (RuntimeException cleanup) {
                e.addSuppressed(cleanup);
            }
            throw e;
        }
        return new RedisServer(process, password);
    }
}
