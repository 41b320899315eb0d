package dev.relock.faults;

import dev.relock.testredis.RedisSentinelGroup;
import dev.relock.testredis.RedisServer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * A master with one replica, watched by three sentinels; every worker reaches the master through the sentinels'
 * {@code redis-sentinel://} URI, with or without the replication guard. Its faults are failovers, planned or after
 * the master was killed; each returns only once the group is whole again (a new master that accepts writes, and a
 * replica in sync with it), so the next injection finds a replica to promote.
 *
 * <p>One replica only: it is the only candidate, so a hold it had not received when its master died is gone.
 */
final class SentinelServers extends LockServers {

    /**
     * The sentinels' {@code down-after-milliseconds}. Not the fixture's 1 s: on a busy 2-core host running the
     * campaign, sentinels with 1 s now and then (1 kill in 11, in two runs) found the master they had just promoted
     * silent for that long and failed over again, to the killed node just restarted, which had come back with the
     * RDB it last received as a replica, seconds old: a second, stale failover, not the fault this scenario injects.
     * With 2 s none was seen in 18 kills.
     */
    static final Duration DOWN_AFTER = Duration.ofMillis(2_000);

    /**
     * The guard's {@code replicas:timeoutMillis}: one replica, 300 ms (ReplicationGuardTest's timeout), below the
     * campaign's 500 ms command timeout as the client requires.
     */
    static final String GUARD = "1:300";

    private final RedisSentinelGroup group;
    private final String guard;

    private SentinelServers(String guard) {
        this.group = RedisSentinelGroup.builder().replicas(1).downAfter(DOWN_AFTER).start();
        this.guard = guard;
    }

    /** Acquisitions are handed out once the master has them, replicated or not. */
    static SentinelServers unguarded() {
        return new SentinelServers("");
    }

    /** Acquisitions are handed out only once the replica has acknowledged them ({@link #GUARD}). */
    static SentinelServers guarded() {
        return new SentinelServers(GUARD);
    }

    @Override
    String lockSpec(String workerId) {
        return group.sentinelUri();
    }

    @Override
    String guard() {
        return guard;
    }

    @Override
    String describe() {
        return "a master, one replica, three sentinels"
                + (guard.isEmpty() ? "" : "; replication guard of 1 replica, " + guard.split(":")[1] + " ms");
    }

    /**
     * SENTINEL FAILOVER: the replica is promoted and the former master made its replica; returns once every
     * sentinel names the new master, it accepts writes and the former master replicates from it. The sentinels do
     * not pause the former master (CLUSTER FAILOVER does): it stays a master, taking the writes of the clients still
     * connected to it, until they demote it 4 hello periods after the promotion (2 s on Redis 7 with the fixture's
     * timers, 8 s on 6.2), killing its clients; what it took meanwhile is lost when it resyncs from the new master.
     * Clients that reconnect in between (any dropped connection) are sent to the new master: two masters at once.
     */
    String plannedFailover(Campaign.Run run) {
        long started = System.nanoTime();
        RedisServer before = group.master();
        RedisServer after = group.failover();
        return "master " + before.port() + " -> " + after.port() + " in " + millisSince(started) + " ms";
    }

    /**
     * kill -9 of the master; once the sentinels agree on the promoted replica, the killed node is restarted and the
     * sentinels turn it into the new master's replica, in sync before this returns. It restarts without persistence
     * but with the RDB it last received as a replica: until it has synced, its data are stale, and it comes back as
     * a master until the sentinels demote it (4 hello periods: 2 s on Redis 7, 8 s on 6.2); no client is sent to it,
     * the sentinels name the promoted replica.
     */
    String killTheMaster(Campaign.Run run) {
        long started = System.nanoTime();
        RedisServer killed = group.master();
        RedisServer promoted = group.killMaster();
        long promotedMillis = millisSince(started);
        killed.restart();
        group.awaitReplicasInSync();
        RedisServer master = group.master();
        String description = "killed master " + killed.port() + ", " + promoted.port() + " promoted in "
                + promotedMillis + " ms, " + killed.port() + " its replica in " + millisSince(started) + " ms";
        // not the fault injected, but the history must say so: the sentinels failed over once more meanwhile
        return master == promoted ? description : description + "; then the sentinels failed over again, to "
                + master.port();
    }

    private static long millisSince(long startNanos) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
    }

    @Override
    public void close() {
        group.close();
    }
}
