package dev.relock.faults;

import dev.relock.RedisUnavailableException;
import dev.relock.RelockClient;
import dev.relock.RelockClientBuilder;
import dev.relock.fencing.RedisFence;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One worker process of the campaign: runs its {@link Workload}'s loop in as many threads as the workload says, each
 * until the run's time is up, and writes each step to its history file (see {@link HistoryEvent} for the format).
 * The loops are {@link LockSections}, {@link SemaphoreSections}, {@link QueueSections} and {@link LatchRounds}.
 * Every line is flushed before the next step, so a kill -9 loses at most the step under way.
 *
 * <p>Options, all required: {@code --id} the worker's id, {@code --history} its history file, {@code --workload} a
 * {@link Workload}'s name, {@code --lock} how to reach the lock ({@link LockServers#lockSpec}), {@code --guard} a
 * replication guard ({@code replicas:timeoutMillis}, or empty for none), {@code --resource} the resource Redis's URI,
 * {@code --sql} the JDBC URL of the fenced table, {@code --seconds} how long to run, {@code --lease} the lease in ms
 * (renewed by the lease keeper), {@code --timeout} the command timeout in ms.
 */
public final class FaultWorker {

    static final String LOCK = "campaign";
    static final String REGISTER = "campaign:register";
    static final String COUNTER = "campaign:counter";

    private static final List<String> OPTIONS = List.of("--id", "--history", "--workload", "--lock", "--guard",
            "--resource", "--sql", "--seconds", "--lease", "--timeout");

    private final String id;
    private final HistoryWriter history;
    /** {@code <lock>/<token>} to the thread holding it: written by the threads, read by the lease-lost listener. */
    private final Map<String, String> holders = new ConcurrentHashMap<>();

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

    private void run(Map<String, String> options) throws Exception {
        Workload workload = Workload.valueOf(options.get("--workload"));
        Duration runFor = Duration.ofSeconds(Long.parseLong(options.get("--seconds")));
        // connecting may take seconds on a loaded host: the run counts from STARTED, as the campaign counts it, and
        // the worker tries as long as the campaign waits for it (a quick run's 5 s are less than a slow JVM's start)
        Duration connectFor = runFor.compareTo(Campaign.WORKER_START) > 0 ? runFor : Campaign.WORKER_START;
        RelockClient connected = connect(options, System.nanoTime() + connectFor.toNanos());
        if (connected == null) {
            return;
        }
        RedisClient resourceClient = RedisClient.create(options.get("--resource"));
        try (StatefulRedisConnection<String, String> resource = resourceClient.connect();
                RelockClient client = connected) {
            RedisFence fence = RedisFence.on(resource);
            List<Connection> sql = new ArrayList<>();
            for (int n = 1; n <= workload.threads; n++) {
                sql.add(DriverManager.getConnection(options.get("--sql")));
            }
            history.append(EventKind.STARTED, 0, workload.name());
            long end = System.nanoTime() + runFor.toNanos();
            List<Thread> threads = new ArrayList<>();
            List<Throwable> failures = new ArrayList<>();
            for (int n = 1; n <= workload.threads; n++) {
                String threadId = workload.threads == 1 ? id : id + "." + n;
                WorkerThread context = new WorkerThread(threadId, n, history, client, resource.sync(), fence,
                        sql.get(n - 1), holders, end, new Random());
                Thread thread = new Thread(() -> runThread(workload, context, failures), threadId);
                thread.start();
                threads.add(thread);
            }
            for (Thread thread : threads) {
                thread.join();
            }
            if (!failures.isEmpty()) {
                throw new IllegalStateException("worker " + id + ": " + failures.size() + " threads failed",
                        failures.get(0));
            }
        } finally {
            resourceClient.shutdown();
        }
    }

    /** One thread's loop; a failure the loop did not expect is logged, kept for the worker's exit, and ends it. */
    private static void runThread(Workload workload, WorkerThread context, List<Throwable> failures) {
        try (Connection sql = context.sql()) {
            workload.loop.run(context);
        } catch (Exception | Error e) {
            context.log(EventKind.ERROR, 0, "thread ended: " + WorkerThread.describe(e));
            synchronized (failures) {
                failures.add(e);
            }
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
                        .leaseLostListener(lost -> history.append(
                                holders.getOrDefault(lost.lockName() + "/" + lost.fencingToken(), id), EventKind.LOST,
                                lost.fencingToken(), lost.reason()))
                        .build();
            } catch (RedisUnavailableException e) {
                history.append(EventKind.ERROR, 0, "connecting: " + WorkerThread.describe(e));
                if (System.nanoTime() - end >= 0) {
                    return null;
                }
                Thread.sleep(50); // the servers are failing: do not spin on them
            }
        }
    }
}
