package dev.relock.faults;

import dev.relock.LeaseLostException;
import dev.relock.RedisUnavailableException;
import dev.relock.RelockClient;
import dev.relock.RelockClientBuilder;
import dev.relock.RelockLock;
import dev.relock.fencing.JdbcFence;
import dev.relock.fencing.RedisFence;
import dev.relock.fencing.StaleFencingTokenException;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * One worker process of the campaign: loops on critical sections of one relock lock until its time
 * is up, and writes each step to its history file (see {@link HistoryEvent} for the format).
 *
 * <p>Inside each section it reads a counter on the resource Redis, works {@link #WORK_MILLIS}, writes
 * the counter back one higher (unfenced), then makes two fenced writes: the register beside the counter
 * (relock's {@link RedisFence}, which refuses a token older than the last that wrote) and a row in a SQL
 * table ({@link JdbcFence}). A holder that was frozen in its work loses an update of the counter and has
 * its fenced writes refused, so the report shows what fencing saved. No fault touches the resources.
 * Every line is flushed before the next step, so a kill -9 loses at most the step under way.
 *
 * <p>Options, all required: {@code --id} the worker's id, {@code --history} its history file, {@code --lock}
 * how to reach the lock ({@link LockServers#lockSpec}), {@code --guard} a replication guard
 * ({@code replicas:timeoutMillis}, or empty for none), {@code --resource} the resource Redis's URI,
 * {@code --sql} the JDBC URL of the fenced table, {@code --seconds} how long to run, {@code --lease} the
 * lease in ms (renewed by the lease keeper), {@code --timeout} the command timeout in ms.
 */
public final class FaultWorker {

    static final String LOCK = "campaign";
    static final String REGISTER = "campaign:register";
    static final String COUNTER = "campaign:counter";
    /** How long a section works between reading the counter and writing it and the register. */
    static final long WORK_MILLIS = 1;

    private static final List<String> OPTIONS =
            List.of("--id", "--history", "--lock", "--guard", "--resource", "--sql", "--seconds", "--lease", "--timeout");
    private static final JdbcFence TABLE = JdbcFence.forTable(Resources.TABLE, "id", "fencing_token");

    private final String id;
    private final HistoryWriter history;

    private FaultWorker(String id, HistoryWriter history) {
        this.id = id;
        this.history = history;
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> options = options(args);
        String id = options.get("--id");
        try (HistoryWriter out = new HistoryWriter(Path.of(options.get("--history")), id)) {
            new FaultWorker(id, out).run(options);
        }
        System.exit(0); // Lettuce's threads must not keep a finished worker alive
    }

    /** The options of {@link #OPTIONS}, each given once; anything else fails naming it. */
    static Map<String, String> options(String... args) {
        Map<String, String> options = new HashMap<>();
        for (int i = 0; i < args.length; i += 2) {
            if (!OPTIONS.contains(args[i]) || i + 1 >= args.length) {
                throw new IllegalArgumentException("worker option " + args[i] + " unknown or without a value; "
                        + "known: " + OPTIONS + "; given: " + Arrays.toString(args));
            }
            options.put(args[i], args[i + 1]);
        }
        if (!options.keySet().containsAll(OPTIONS)) {
            throw new IllegalArgumentException("worker options missing: every one of " + OPTIONS + " is needed; given: "
                    + Arrays.toString(args));
        }
        return options;
    }

    /**
     * A client builder for a lock spec ({@link LockServers#lockSpec}; {@code caller:} and a URI for a Lettuce
     * client the caller made, on default options) and a guard ("" or replicas:timeoutMillis).
     */
    static RelockClientBuilder clientFor(String lockSpec, String guard) {
        RelockClientBuilder builder = RelockClient.builder();
        if (lockSpec.startsWith("caller:")) {
            // a caller's Lettuce client on its default options: commands in flight at a dropped connection are
            // sent again after the reconnect. It lives as long as the worker's process.
            builder.redisClient(RedisClient.create(lockSpec.substring("caller:".length())));
        } else if (lockSpec.startsWith("cluster:")) {
            builder.redisClusterUris(lockSpec.substring("cluster:".length()).split(","));
        } else if (lockSpec.startsWith("redlock:")) {
            builder.redlock(lockSpec.substring("redlock:".length()).split(","));
        } else {
            builder.redisUri(lockSpec);
        }
        if (!guard.isEmpty()) {
            String[] parts = guard.split(":");
            builder.replicationGuard(Integer.parseInt(parts[0]), Duration.ofMillis(Long.parseLong(parts[1])));
        }
        return builder;
    }

    private void run(Map<String, String> options) throws InterruptedException, SQLException {
        long end = System.nanoTime() + Duration.ofSeconds(Long.parseLong(options.get("--seconds"))).toNanos();
        RelockClient connected = connect(options, end);
        if (connected == null) {
            return;
        }
        RedisClient resourceClient = RedisClient.create(options.get("--resource"));
        try (StatefulRedisConnection<String, String> resource = resourceClient.connect();
                Connection sql = DriverManager.getConnection(options.get("--sql"));
                RelockClient client = connected) {
            RedisFence fence = RedisFence.on(resource);
            RedisCommands<String, String> commands = resource.sync();
            RelockLock lock = client.lock(LOCK);
            while (System.nanoTime() < end) {
                section(lock, fence, commands, sql, end);
            }
        } finally {
            resourceClient.shutdown();
        }
    }

    /**
     * The worker's client, built again while too few servers answer (a Redlock client is built only once a majority
     * of its nodes connected, and on a loaded host a worker's JVM may still be starting when the first fault comes,
     * {@link Campaign#FIRST_FAULT} after the workers were started), each failure an ERROR in the history; null when
     * the run ended first.
     */
    private RelockClient connect(Map<String, String> options, long end) throws InterruptedException {
        while (true) {
            try {
                return clientFor(options.get("--lock"), options.get("--guard"))
                        .defaultLease(Duration.ofMillis(Long.parseLong(options.get("--lease"))))
                        .commandTimeout(Duration.ofMillis(Long.parseLong(options.get("--timeout"))))
                        .leaseLostListener(lost -> log(EventKind.LOST, lost.fencingToken(), lost.reason()))
                        .build();
            } catch (RedisUnavailableException e) {
                log(EventKind.ERROR, 0, "connecting: " + describe(e));
                if (System.nanoTime() - end >= 0) {
                    return null;
                }
                Thread.sleep(50); // the servers are failing: do not spin on them
            }
        }
    }

    /** One attempt: wait (bounded by the run's end), and if acquired, write, count and release. */
    private void section(RelockLock lock, RedisFence fence, RedisCommands<String, String> resource, Connection sql,
            long end) throws InterruptedException {
        if (!releaseLeftoverHolds(lock)) {
            return;
        }
        log(EventKind.REQUEST, 0, "");
        long token;
        try {
            long waitNanos = Math.max(1, end - System.nanoTime());
            if (!lock.tryLock(waitNanos, TimeUnit.NANOSECONDS)) {
                log(EventKind.ERROR, 0, "not acquired before the run ended");
                return;
            }
            token = lock.fencingToken().orElse(0);
        } catch (RuntimeException e) {
            log(EventKind.ERROR, 0, describe(e));
            Thread.sleep(50); // Redis is failing: do not spin on it
            return;
        }
        log(EventKind.ACQUIRED, token, "");
        try {
            String read = resource.get(COUNTER);
            long value = read == null ? 0 : Long.parseLong(read);
            Thread.sleep(WORK_MILLIS); // the section's work, between reading and writing what it protects
            resource.set(COUNTER, Long.toString(value + 1));
            log(EventKind.COUNTER, token, Long.toString(value)); // written: a kill before this line wrote nothing, or a value nobody reads twice
            log(EventKind.WRITE_SENT, token, "");
            boolean written = fence.trySet(REGISTER, id + ":" + token, token);
            log(written ? EventKind.WRITE_OK : EventKind.WRITE_REFUSED, token, "");
            log(EventKind.SQL_SENT, token, "");
            try {
                TABLE.update(sql, Resources.ROW, token, "writer = ?", id);
                log(EventKind.SQL_OK, token, "");
            } catch (StaleFencingTokenException e) {
                log(EventKind.SQL_REFUSED, token, "");
            }
        } catch (RuntimeException | SQLException e) {
            log(EventKind.ERROR, token, "resource: " + describe(e));
        }
        log(EventKind.RELEASING, token, "");
        try {
            lock.unlock();
            log(EventKind.RELEASED, token, "");
        } catch (LeaseLostException e) {
            log(EventKind.RELEASE_LOST, token, describe(e));
        } catch (RuntimeException e) {
            // the hold is given up locally all the same; its key runs out in Redis by its lease
            log(EventKind.ERROR, token, "release: " + describe(e));
        }
    }

    /**
     * Gives up the holds an earlier section could not release (unlock failed while Redis was away, so the
     * hold stayed this thread's): otherwise the next tryLock would re-enter it instead of acquiring afresh.
     *
     * @return whether none is left
     */
    private boolean releaseLeftoverHolds(RelockLock lock) throws InterruptedException {
        while (lock.getHoldCount() > 0) {
            try {
                lock.unlock();
            } catch (LeaseLostException e) {
                // that hold was lost; it is gone from this thread all the same
            } catch (RuntimeException e) {
                log(EventKind.ERROR, 0, "leftover hold: " + describe(e));
                Thread.sleep(50); // Redis is failing: do not spin on it
                return false;
            }
        }
        return true;
    }

    private static String describe(Throwable e) {
        return e.getClass().getSimpleName() + ": " + String.valueOf(e.getMessage());
    }

    private void log(EventKind kind, long token, String detail) {
        history.append(kind, token, detail);
    }
}
