package dev.relock.cli.demo;

import dev.relock.LeaseLostException;
import dev.relock.LockHandle;
import dev.relock.RedisUnavailableException;
import dev.relock.RelockClient;
import dev.relock.RelockLock;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

/**
 * The main class of one worker process of {@code relock demo} and {@code relock verify}: a few
 * threads that take random locks of the run and, holding one, increment its counter in Redis with
 * a plain GET then SET and check the fencing token against the last one written under that lock.
 * It speaks {@link WorkerProtocol} with its parent over stdin and stdout.
 *
 * <p>Design notes. The main thread reads commands from {@link #commands} and runs phases; a daemon
 * thread reads stdin, queues commands and halts the JVM at end of input, so a worker dies with its
 * parent whatever the parent died of. A phase thread that fails sets {@link #stopRequested}, which
 * ends the others' loops. Phase threads put
 * their acquisitions in a queue; only the main thread writes to stdout (every
 * {@value WorkerProtocol#REPORT_INTERVAL_MILLIS} ms), so a critical section never waits on a pipe.
 * One {@link RelockClient} per worker, as an application would have; one Lettuce connection per
 * thread for the counter, so unguarded increments really interleave.
 */
public final class Worker {

    private static final int WARM_UP_ROUNDS = 300;
    private static final long WARM_UP_MILLIS = 500;

    private final Map<String, String> config;
    private final BlockingQueue<String> commands;
    private final Writer out;
    private volatile boolean stopRequested;

    private RelockClient relock;
    private RedisClient redis;
    private final List<StatefulRedisConnection<String, String>> connections = new ArrayList<>();

    private Worker(Map<String, String> config, BlockingQueue<String> commands, Writer out) {
        this.config = config;
        this.commands = commands;
        this.out = out;
    }

    public static void main(String[] args) {
        // stdout carries the protocol; anything a library prints goes to stderr instead
        Writer protocolOut = new BufferedWriter(new OutputStreamWriter(
                new FileOutputStream(FileDescriptor.out), StandardCharsets.UTF_8), 1 << 16);
        System.setOut(System.err);
        BlockingQueue<String> commands = new LinkedBlockingQueue<>();
        Map<String, String> config = new HashMap<>();
        Worker worker = new Worker(config, commands, protocolOut);
        Thread stdin = new Thread(worker::readStdin, "relock-worker-stdin");
        stdin.setDaemon(true);
        stdin.start();
        int status;
        try {
            status = worker.serve();
        } catch (InterruptedException e) {
            status = WorkerProtocol.EXIT_ERROR;
        }
        worker.closeConnections();
        System.exit(status);
    }

    /** The stdin thread: commands to the queue; end of input halts the JVM. */
    private void readStdin() {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                commands.add(line);
            }
        } catch (IOException e) {
            // the same as end of input: the parent is gone
        }
        // halt, not exit: nobody is left to read what a shutdown would say, and a thread stuck in a
        // Redis call must not delay the end; held locks expire with their lease
        Runtime.getRuntime().halt(WorkerProtocol.EXIT_ORPHANED);
    }

    private int serve() throws InterruptedException {
        String command;
        while (!(command = commands.take()).equals(WorkerProtocol.CONNECT)) {
            int equals = command.indexOf('=');
            if (equals > 0) {
                config.put(command.substring(0, equals), command.substring(equals + 1));
            }
        }
        try {
            connect();
            warmUp();
            send(WorkerProtocol.READY);
            while (true) {
                command = commands.take();
                if (command.equals(WorkerProtocol.QUIT)) {
                    return 0;
                }
                String[] fields = command.split(" ");
                if (fields.length == 3 && fields[0].equals(WorkerProtocol.RUN)) {
                    runPhase(fields[1].equals("locked"), Long.parseLong(fields[2]));
                }
            }
        } catch (RuntimeException e) {
            reportError(e);
            return WorkerProtocol.EXIT_ERROR;
        }
    }

    private void connect() {
        String uri = config.get("uri");
        int threads = Integer.parseInt(config.get("threads"));
        // one Lettuce client (one set of event-loop threads) for the lock and the counters; its
        // options are those relock gives the clients it creates itself
        Duration timeout = Duration.ofSeconds(3);
        RedisURI redisUri = RedisURI.create(uri);
        redisUri.setTimeout(timeout);
        redis = RedisClient.create(redisUri);
        redis.setOptions(ClientOptions.builder()
                .autoReconnect(true)
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .timeoutOptions(TimeoutOptions.enabled(timeout))
                .socketOptions(SocketOptions.builder().connectTimeout(timeout).build())
                .build());
        relock = RelockClient.builder()
                .redisClient(redis)
                .keyPrefix(config.get("prefix"))
                .commandTimeout(timeout)
                .defaultLease(Duration.ofMillis(Long.parseLong(config.get("lease-ms"))))
                .build();
        for (int i = 0; i < threads; i++) {
            connections.add(redis.connect());
        }
    }

    /**
     * Takes and releases a lock of this worker's own a few hundred times, incrementing its own
     * counter: loads the scripts into Redis and compiles the hot paths, so the first measured
     * acquisitions are not a cold JVM's. No other worker uses these keys.
     */
    private void warmUp() throws InterruptedException {
        String prefix = config.get("prefix");
        String key = prefix + ":warm-up:" + config.get("worker");
        RelockLock lock = relock.lock("warm-up-" + config.get("worker"));
        RedisCommands<String, String> commands = connections.get(0).sync();
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WARM_UP_MILLIS);
        for (int i = 0; i < WARM_UP_ROUNDS && System.nanoTime() - end < 0; i++) {
            // nobody else takes this lock; a wait is only Redis being slow, and lock() would retry
            // a Redis failure forever instead of reporting it
            if (!lock.tryLock(WARM_UP_MILLIS, TimeUnit.MILLISECONDS)) {
                return;
            }
            try {
                increment(commands, key);
            } finally {
                lock.unlock();
            }
        }
    }

    /** Shared by the threads of one phase; read by the main thread when they are done. */
    private static final class Phase {
        final long deadline;
        final LongAdder increments = new LongAdder();
        final LongAdder fencingViolations = new LongAdder();
        final LongAdder leasesLost = new LongAdder();
        final ConcurrentLinkedQueue<Acquisition> acquisitions = new ConcurrentLinkedQueue<>();
        final AtomicReference<RuntimeException> failure = new AtomicReference<>();

        Phase(long deadline) {
            this.deadline = deadline;
        }
    }

    private void runPhase(boolean locked, long millis) throws InterruptedException {
        stopRequested = false;
        long start = System.nanoTime();
        Phase phase = new Phase(start + TimeUnit.MILLISECONDS.toNanos(millis));
        int locks = Integer.parseInt(config.get("locks"));
        List<RelockLock> lockObjects = new ArrayList<>();
        for (int i = 0; i < locks; i++) {
            lockObjects.add(relock.lock(WorkerProtocol.lockName(i)));
        }
        CountDownLatch finished = new CountDownLatch(connections.size());
        for (int t = 0; t < connections.size(); t++) {
            int thread = t;
            RedisCommands<String, String> commands = connections.get(t).sync();
            Thread runner = new Thread(() -> {
                try {
                    if (locked) {
                        incrementUnderLocks(phase, thread, commands, lockObjects);
                    } else {
                        incrementUnguarded(phase, commands, locks);
                    }
                } catch (RuntimeException e) {
                    phase.failure.compareAndSet(null, e);
                    stopRequested = true;
                } finally {
                    finished.countDown();
                }
            }, "relock-worker-" + t);
            runner.start();
        }
        while (!finished.await(WorkerProtocol.REPORT_INTERVAL_MILLIS, TimeUnit.MILLISECONDS)) {
            report(phase);
        }
        long elapsedMicros = (System.nanoTime() - start) / 1_000;
        report(phase);
        if (phase.failure.get() != null) {
            throw phase.failure.get();
        }
        send(WorkerProtocol.DONE + ' ' + elapsedMicros + ' ' + phase.increments.sum() + ' '
                + phase.fencingViolations.sum() + ' ' + phase.leasesLost.sum());
    }

    private boolean running(Phase phase) {
        return !stopRequested && System.nanoTime() - phase.deadline < 0;
    }

    private void incrementUnderLocks(Phase phase, int thread, RedisCommands<String, String> redis,
            List<RelockLock> locks) {
        String prefix = config.get("prefix");
        while (running(phase)) {
            int lock = ThreadLocalRandom.current().nextInt(locks.size());
            long askedAt = System.nanoTime();
            Optional<LockHandle> acquired;
            try {
                // wait no longer than the phase lasts, so every worker ends on time
                acquired = locks.get(lock).tryAcquire(Duration.ofNanos(Math.max(0, phase.deadline - askedAt)));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            if (acquired.isEmpty()) {
                continue; // the phase is over, or a stop came in
            }
            long waitMicros = (System.nanoTime() - askedAt) / 1_000;
            long acquiredAt = wallClockMicros();
            LockHandle held = acquired.get();
            long token = held.fencingToken();
            boolean violation;
            long releasedAt;
            try {
                // checked under the lock: a token not above the last one written means the order broke
                String last = redis.get(WorkerProtocol.lastTokenKey(prefix, lock));
                violation = last != null && Long.parseLong(last) >= token;
                increment(redis, WorkerProtocol.counterKey(prefix, lock));
                redis.setex(WorkerProtocol.lastTokenKey(prefix, lock), WorkerProtocol.KEY_TTL_SECONDS,
                        Long.toString(token));
            } finally {
                releasedAt = wallClockMicros();
                try {
                    held.close();
                } catch (LeaseLostException e) {
                    phase.leasesLost.increment();
                }
            }
            phase.increments.increment();
            if (violation) {
                phase.fencingViolations.increment();
            }
            phase.acquisitions.add(new Acquisition(0, thread, lock, token, waitMicros, acquiredAt, releasedAt,
                    violation));
        }
    }

    private void incrementUnguarded(Phase phase, RedisCommands<String, String> redis, int locks) {
        String prefix = config.get("prefix");
        while (running(phase)) {
            increment(redis, WorkerProtocol.counterKey(prefix, ThreadLocalRandom.current().nextInt(locks)));
            phase.increments.increment();
        }
    }

    /** The classic lost-update race: read, add one, write back. */
    private static void increment(RedisCommands<String, String> redis, String key) {
        String value = redis.get(key);
        long next = (value == null ? 0 : Long.parseLong(value)) + 1;
        redis.setex(key, WorkerProtocol.KEY_TTL_SECONDS, Long.toString(next));
    }

    /**
     * Wall-clock microseconds: handoff latency compares a release in one process with an acquire in
     * another, and only the host's clock is common to both (every worker runs on the parent's host).
     */
    private static long wallClockMicros() {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000 + now.getNano() / 1_000;
    }

    private void report(Phase phase) {
        StringBuilder lines = new StringBuilder();
        Acquisition next;
        while ((next = phase.acquisitions.poll()) != null) {
            lines.append(next.toLine()).append('\n');
        }
        lines.append(WorkerProtocol.PROGRESS).append(' ').append(phase.increments.sum());
        send(lines.toString());
    }

    private void reportError(RuntimeException e) {
        boolean unavailable = e instanceof RedisUnavailableException || e instanceof RedisConnectionException
                || e instanceof RedisCommandTimeoutException;
        String message = e.getMessage() != null ? e.getMessage() : e.getClass().getName();
        send(WorkerProtocol.ERROR + ' ' + (unavailable ? WorkerProtocol.UNAVAILABLE : WorkerProtocol.FAILED) + ' '
                + WorkerProtocol.oneLine(message));
        e.printStackTrace(System.err); // the parent shows the worker's stderr with --verbose
    }

    private void send(String lines) {
        try {
            out.write(lines);
            out.write('\n');
            out.flush();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write to the parent", e);
        }
    }

    private void closeConnections() {
        if (relock != null) {
            relock.close(); // releases what it still holds, before the connections go
        }
        for (StatefulRedisConnection<String, String> connection : connections) {
            try {
                connection.close();
            } catch (RuntimeException e) {
                // closing anyway
            }
        }
        if (redis != null) {
            redis.shutdown(Duration.ZERO, Duration.ofSeconds(1));
        }
    }
}
