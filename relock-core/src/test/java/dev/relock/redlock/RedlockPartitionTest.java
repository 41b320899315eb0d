package dev.relock.redlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.relock.LeaseLostException;
import dev.relock.LockHandle;
import dev.relock.RedisUnavailableException;
import dev.relock.RelockClient;
import dev.relock.RelockLock;
import dev.relock.RequestsSeen;
import dev.relock.testredis.TcpProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The network between a Redlock holder and a majority of its nodes fails as a black hole (a {@link TcpProxy} in
 * front of each node; connections stay open, nothing arrives): no renewal reaches a majority, and the holder, which
 * counts its validity on its own clock from the send of the last renewal a majority confirmed, is told at the end of
 * that validity (lease less the clock drift), before a majority of nodes lets a contender in. The test asserts the
 * order of events, never milliseconds: how long things took is printed.
 */
@Tag("redis")
class RedlockPartitionTest extends RedlockTestBase {

    private static final Duration LEASE = Duration.ofSeconds(3);
    private static final Duration COMMAND_TIMEOUT = Duration.ofMillis(300);
    /**
     * The holder's clock drift: 1 % + 50 ms, the lease keeper's allowance, not the default 1 % + 2 ms. The margin
     * between the holder's deadline and the contender's entry is the drift plus a few round trips; on a loaded 2-core
     * machine the renewer thread may wake tens of milliseconds late, which 2 ms does not cover.
     */
    private static final double DRIFT_FACTOR = 0.01;
    private static final Duration DRIFT_FIXED = Duration.ofMillis(50);
    /** How much later than its command timeout a call may return on a loaded machine; only a hang exceeds it. */
    private static final Duration SCHEDULING_SLACK = Duration.ofSeconds(1);

    private static final long DRIFT = (long) (LEASE.toNanos() * DRIFT_FACTOR) + DRIFT_FIXED.toNanos();

    private final List<TcpProxy> proxies = new ArrayList<>();

    @Override
    int nodeCount() {
        return 3;
    }

    @BeforeAll
    void startProxies() {
        nodes.forEach(node -> proxies.add(TcpProxy.to(node)));
    }

    @AfterAll
    void stopProxies() {
        proxies.forEach(TcpProxy::close);
    }

    @Test
    void aHolderCutOffFromAMajorityIsToldBeforeAContenderGetsIn() throws Exception {
        String name = "partitioned";
        List<String> throughProxies = new ArrayList<>();
        proxies.forEach(proxy -> throughProxies.add(proxy.uri()));
        RelockClient holder = RelockClient.builder().redlockUris(throughProxies).defaultLease(LEASE)
                .clockDrift(DRIFT_FACTOR, DRIFT_FIXED).commandTimeout(COMMAND_TIMEOUT).leaseLostListener(lost::add)
                .build();
        registerForClose(holder);
        RelockClient contender = newClient(builder -> builder.defaultLease(LEASE).commandTimeout(COMMAND_TIMEOUT));

        LockHandle held = holder.lock(name).acquire();
        AtomicLong toldAt = new AtomicLong();
        held.whenLost().thenRun(() -> toldAt.set(System.nanoTime()));
        // a majority: no renewal can be confirmed from now on; the third node still answers
        proxies.get(0).blackhole();
        proxies.get(1).blackhole();
        try {
            // the holder's own count: its validity runs from the send of the last renewal a majority confirmed
            long lastConfirmed = lastConfirmedSend(holder);

            // calls fail within the command timeout instead of hanging
            long start = System.nanoTime();
            assertThatThrownBy(() -> holder.lock("other").tryLock()).isInstanceOf(RedisUnavailableException.class);
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(COMMAND_TIMEOUT.plus(SCHEDULING_SLACK));

            Optional<LockHandle> taken = contender.lock(name).tryAcquire(LEASE.plus(HANG));
            long acquiredAt = System.nanoTime();
            long told = toldAt.get();
            assertThat(taken).as("the lease ran out on a majority").isPresent();
            try (LockHandle theirs = taken.get()) {
                assertThat(told).as("the holder was told before the contender got in").isNotZero();
                System.out.printf("measured: Redlock holder told %d ms after its last confirmed renewal was sent, the "
                                + "contender got in %d ms after it (lease %d ms)%n",
                        TimeUnit.NANOSECONDS.toMillis(told - lastConfirmed),
                        TimeUnit.NANOSECONDS.toMillis(acquiredAt - lastConfirmed), LEASE.toMillis());
                assertThat(told - acquiredAt).as("told before the contender got in").isNotPositive();
                assertThat(told - lastConfirmed).as("not told before half its lease had passed")
                        .isGreaterThanOrEqualTo(LEASE.toNanos() / 2);
                assertThat(held.isValid()).isFalse();
                assertThat(theirs.fencingToken()).isGreaterThan(held.fencingToken());
                assertThat(lost).as("told once").hasSize(1);
            }
            long unlock = System.nanoTime();
            assertThatThrownBy(held::close).isInstanceOf(LeaseLostException.class);
            assertThat(Duration.ofNanos(System.nanoTime() - unlock)).isLessThan(COMMAND_TIMEOUT.plus(SCHEDULING_SLACK));
        } finally {
            proxies.forEach(TcpProxy::heal);
        }
        // the requests held in the partition arrive now; none of them takes the lock again
        assertThat(contender.inspect(name).isHeld()).isFalse();
        assertThat(lost).as("told once").hasSize(1);
    }

    @Test
    void theHoldIsRenewedAsSoonAsTheConnectionsAreBack() throws Exception {
        // a long lease: the renewer's first pass comes a third of it after the client started, long after the reconnect
        Duration lease = Duration.ofSeconds(60);
        String name = "renewed-on-reconnect";
        String key = "relock:{" + name + "}";
        List<String> throughProxies = new ArrayList<>();
        proxies.forEach(proxy -> throughProxies.add(proxy.uri()));
        long created = System.nanoTime();
        RelockClient holder = RelockClient.builder().redlockUris(throughProxies).defaultLease(lease)
                .commandTimeout(COMMAND_TIMEOUT).leaseLostListener(lost::add).build();
        registerForClose(holder);
        LockHandle held = holder.lock(name).acquire();
        // each node's lease left, as it was set by the acquisition, and when it was read
        List<Long> acquiredLeft = new ArrayList<>();
        List<Long> readAt = new ArrayList<>();
        for (var node : nodes) {
            acquiredLeft.add(Long.parseLong(node.execute("PTTL", key)));
            readAt.add(System.nanoTime());
        }
        long cut = System.nanoTime();
        proxies.forEach(TcpProxy::cutConnections); // Lettuce reconnects every connection
        // a renewal after the acquisition leaves a node more lease than the acquisition's less the time since
        await().atMost(lease.dividedBy(3)).pollInterval(Duration.ofMillis(20)).until(() -> {
            for (int i = 0; i < nodes.size(); i++) {
                long left = Long.parseLong(nodes.get(i).execute("PTTL", key));
                long sinceRead = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - readAt.get(i));
                if (left + sinceRead - acquiredLeft.get(i) < 20) {
                    return false;
                }
            }
            return true;
        });
        long renewedBy = System.nanoTime();
        System.out.printf("measured: Redlock hold renewed on every node within %d ms after the connections were cut%n",
                TimeUnit.NANOSECONDS.toMillis(renewedBy - cut));
        assertThat(renewedBy - (created + lease.toNanos() / 3)).as("renewed before the renewer's first pass")
                .isNegative();
        assertThat(held.isValid()).isTrue();
        held.close();
        assertThat(lost).isEmpty();
    }

    /**
     * A wait with a deadline that finds no majority (two of three nodes in a black hole: its attempt times out there)
     * tries again with back-off until its deadline, as {@code lock()} does, and takes the lock once a majority answers
     * again. The black hole ends when the first node cut off is sent something more for the lock after the first
     * attempt (the next attempt, or the clean-up of the first once it timed out): the first attempt has failed by then.
     */
    @Test
    void aWaitThatFindsNoMajorityTriesAgainAndTakesTheLockOnceAMajorityAnswers() throws Exception {
        String name = "majority-back";
        Duration wait = Duration.ofSeconds(10);
        List<String> throughProxies = new ArrayList<>();
        proxies.forEach(proxy -> throughProxies.add(proxy.uri()));
        RelockClient client = RelockClient.builder().redlockUris(throughProxies).commandTimeout(COMMAND_TIMEOUT).build();
        registerForClose(client);
        RelockLock lock = client.lock(name);
        assertThat(lock.tryLock()).isTrue(); // every node's connection is open
        lock.unlock();
        proxies.get(0).blackhole();
        proxies.get(1).blackhole();
        try {
            RequestsSeen sent = RequestsSeen.watch(proxies.get(0), "{" + name + "}", 2,
                    () -> proxies.forEach(TcpProxy::heal));
            long start = System.nanoTime();
            assertThat(lock.tryLock(wait.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
            assertThat(millisSince(start)).as("returned once a majority answered").isLessThan(wait.toMillis());
            assertThat(sent.count()).isGreaterThanOrEqualTo(2);
            await().atMost(HANG).until(() -> nodesHolding(name) == nodes.size());
            lock.unlock();
        } finally {
            proxies.forEach(TcpProxy::heal);
        }
    }

    /**
     * When the request that last set the validity of {@code client}'s one hold was sent, by the client's own count
     * (its validity ends a lease less the drift after that); never later than that, and within a millisecond of it
     * unless this thread is held up on every try.
     */
    private static long lastConfirmedSend(RelockClient client) {
        long estimate = 0;
        for (int i = 0; i < 100; i++) {
            long before = System.nanoTime();
            Duration left = client.heldLocks().get(0).remainingLease();
            long after = System.nanoTime();
            estimate = before + left.toNanos() - (LEASE.toNanos() - DRIFT);
            if (after - before < TimeUnit.MILLISECONDS.toNanos(1)) {
                break;
            }
        }
        return estimate;
    }
}
