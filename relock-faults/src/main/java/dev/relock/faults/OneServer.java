package dev.relock.faults;

import dev.relock.testredis.RedisServer;
import io.lettuce.core.RedisCommandExecutionException;
import dev.relock.testredis.TcpProxy;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One standalone Redis holds the lock. Its faults: restarts with and without data, data wiped, scripts
 * forgotten, keys evicted, and — when built {@link #proxied()} — network faults on one worker's
 * connections, each worker reaching Redis through a {@link TcpProxy} of its own.
 */
final class OneServer extends LockServers {

    /** How far above its use an {@link #evicting()} server's limit is set while a fault lasts. */
    private static final long EVICTION_HEADROOM = 512 * 1024;
    /** The size of one filler value written to push an {@link #evicting()} server past its limit. */
    private static final int FILLER_BYTES = 128 * 1024;

    private final RedisServer server;
    private final String describe;
    private final boolean proxied;
    /** Whether every other worker brings its own Lettuce client on default options (which re-sends after a reconnect). */
    private final boolean callerClients;
    /** Worker id to its proxy, for the workers started so far; their proxies live until {@link #close()}. */
    private final Map<String, TcpProxy> proxies = new LinkedHashMap<>();
    private int fills;

    private OneServer(RedisServer server, String describe, boolean proxied, boolean callerClients) {
        this.server = server;
        this.describe = describe;
        this.proxied = proxied;
        this.callerClients = callerClients;
    }

    /** A Redis without persistence, reached directly. */
    static OneServer plain() {
        return new OneServer(RedisServer.start(), "one Redis without persistence", false, false);
    }

    /** A Redis with an append-only file synced on every write. */
    static OneServer appendFsyncAlways() {
        return new OneServer(RedisServer.builder().appendOnly(true).config("appendfsync", "always").start(),
                "one Redis, append-only file with appendfsync always", false, false);
    }

    /** A Redis without persistence, each worker through its own TCP proxy. */
    static OneServer proxied() {
        return new OneServer(RedisServer.start(), "one Redis, each worker through its own TCP proxy", true, false);
    }

    /**
     * As {@link #proxied()}, and every other worker hands relock a Lettuce client of its own on default options,
     * which sends the commands in flight at a dropped connection again once it has reconnected.
     */
    static OneServer proxiedWithCallerClients() {
        return new OneServer(RedisServer.start(), "one Redis, each worker through its own TCP proxy; w2, w4, … on "
                + "a Lettuce client of their own (default options: commands re-sent after a reconnect)", true, true);
    }

    /**
     * A Redis with {@code maxmemory-policy allkeys-random}: whenever it is past its {@code maxmemory}, any key may
     * go, a lock's too. Its limit is off between faults ({@link #fillPastMaxmemory}).
     */
    static OneServer evicting() {
        RedisServer server = RedisServer.start();
        server.execute("CONFIG", "SET", "maxmemory-policy", "allkeys-random");
        return new OneServer(server, "one Redis, allkeys-random", false, false);
    }

    @Override
    String lockSpec(String workerId) {
        if (!proxied) {
            return server.uri();
        }
        String uri = proxies.computeIfAbsent(workerId, id -> TcpProxy.to(server)).uri();
        boolean even = Integer.parseInt(workerId.substring(1)) % 2 == 0; // ids are w1, w2, …
        return callerClients && even ? "caller:" + uri : uri;
    }

    @Override
    String coordinatorSpec() {
        return server.uri();
    }

    @Override
    String describe() {
        return describe;
    }

    String restartEmpty(Campaign.Run run) {
        server.restartWithoutData();
        return "restarted empty";
    }

    /** Down for longer than the lease, then back empty: every holder's deadline passed while it was down. */
    String restartEmptyAfterTheLease(Campaign.Run run) throws InterruptedException {
        server.kill();
        Thread.sleep(Campaign.LEASE.toMillis() + 500); // the fault: down for longer than a lease
        server.restartWithoutData();
        return "killed, back empty after " + (Campaign.LEASE.toMillis() + 500) + " ms";
    }

    /** Redis frozen (SIGSTOP) for longer than the lease, then thawed: every holder's deadline passed meanwhile. */
    String pauseRedisPastTheLease(Campaign.Run run) throws InterruptedException {
        server.pause();
        try {
            Thread.sleep(Campaign.LEASE.toMillis() + 500); // the fault: frozen for longer than a lease
        } finally {
            server.resume();
        }
        return "frozen for " + (Campaign.LEASE.toMillis() + 500) + " ms";
    }

    String flushAll(Campaign.Run run) {
        server.flushAll();
        return "FLUSHALL";
    }

    String restart(Campaign.Run run) {
        server.restart();
        return "restarted";
    }

    String scriptFlush(Campaign.Run run) {
        server.scriptFlush();
        return "SCRIPT FLUSH";
    }

    /**
     * Sets {@code maxmemory} just above what Redis uses now and writes filler values until it has evicted keys (a
     * lock's among them, at random), then deletes the fillers that are left and lifts the limit again. While it
     * lasts, writes the server cannot make room for fail with OOM, the workers' too.
     */
    String fillPastMaxmemory(Campaign.Run run) {
        long evictedBefore = Long.parseLong(info(server, "evicted_keys"));
        long used = Long.parseLong(info(server, "used_memory"));
        server.execute("CONFIG", "SET", "maxmemory", Long.toString(used + EVICTION_HEADROOM));
        String filler = "x".repeat(FILLER_BYTES);
        int round = ++fills;
        int written = 0;
        long evicted = 0;
        try {
            while (evicted == 0 && written < 4 * EVICTION_HEADROOM / FILLER_BYTES) {
                server.execute("SET", "filler:" + round + ":" + written++, filler);
                evicted = Long.parseLong(info(server, "evicted_keys")) - evictedBefore;
            }
        } catch (RedisCommandExecutionException e) {
            // OOM: nothing left to evict makes room for the filler; what was evicted is counted below
        } finally {
            server.execute("CONFIG", "SET", "maxmemory", "0");
            for (int i = 0; i < written; i++) {
                server.execute("DEL", "filler:" + round + ":" + i);
            }
        }
        evicted = Long.parseLong(info(server, "evicted_keys")) - evictedBefore;
        return evicted + " keys evicted";
    }

    /** A black hole between the holder (else any worker) and Redis for longer than the lease. */
    String blackholeAWorkerPastTheLease(Campaign.Run run) throws Exception {
        WorkerProcess victim = run.holderOrAnyWorker();
        TcpProxy proxy = victim == null ? null : proxies.get(victim.id);
        if (proxy == null) {
            return "";
        }
        proxy.blackhole();
        try {
            Thread.sleep(Campaign.LEASE.toMillis() + 500); // the fault: cut off for longer than its lease
        } finally {
            proxy.heal();
        }
        return "black hole for " + victim.id;
    }

    /** A worker's next reply is lost and its connections reset (Lettuce reconnects; commands may run twice). */
    String loseAReplyAndReset(Campaign.Run run) {
        WorkerProcess victim = run.holderOrAnyWorker();
        TcpProxy proxy = victim == null ? null : proxies.get(victim.id);
        if (proxy == null) {
            return "";
        }
        if (run.random().nextBoolean()) {
            proxy.loseNextReplyAndReset();
            return "reply lost, reset: " + victim.id;
        }
        proxy.loseNextReplyAndClose();
        return "reply lost, closed: " + victim.id;
    }

    /**
     * Replies to the holder (else any worker) come later than the command timeout, for 0.5 to 2.5 s: its calls
     * time out, though Redis ran them, and for the longer spikes its lease runs out meanwhile.
     */
    String delayRepliesPastTheTimeout(Campaign.Run run) throws InterruptedException {
        WorkerProcess victim = run.holderOrAnyWorker();
        TcpProxy proxy = victim == null ? null : proxies.get(victim.id);
        if (proxy == null) {
            return "";
        }
        long spikeMillis = 500 + run.random().nextInt(2_000);
        proxy.replyLatency(Campaign.COMMAND_TIMEOUT.plusMillis(200));
        try {
            Thread.sleep(spikeMillis); // the fault: replies late for this long
        } finally {
            proxy.replyLatency(Duration.ZERO);
        }
        return "replies " + (Campaign.COMMAND_TIMEOUT.toMillis() + 200) + " ms late for " + spikeMillis + " ms: "
                + victim.id;
    }

    private static String info(RedisServer server, String field) {
        for (String line : server.execute("INFO", "all").split("\r?\n")) {
            if (line.startsWith(field + ":")) {
                return line.substring(field.length() + 1).trim();
            }
        }
        throw new IllegalStateException("INFO has no " + field);
    }

    @Override
    public void close() {
        proxies.values().forEach(TcpProxy::close);
        server.close();
    }
}
