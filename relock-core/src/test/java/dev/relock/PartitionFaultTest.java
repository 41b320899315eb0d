package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.relock.ExclusionChecker.Report;
import dev.relock.internal.script.SingleServerScripts;
import dev.relock.testredis.RedisServer;
import dev.relock.testredis.TcpProxy;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The network between a holder and Redis fails or slows down ({@link TcpProxy}). In a black hole (connections stay
 * open, nothing arrives) every call fails within the command timeout, and the holder's client, which counts the lease
 * on its own clock from the moment it sent the last request Redis confirmed, tells the holder at that count's
 * deadline (the lease less a drift allowance): before Redis lets a contender in, so exclusion holds without help
 * from fencing. A renewal that gets through after the deadline does not leave the lock taken: the client releases it.
 * Reset connections (the client renews as soon as it has reconnected) and latency within the command timeout cost no
 * lock. The tests assert the order of events, never milliseconds: how long things took is printed.
 */
@Tag("redis")
class PartitionFaultTest {

    private static final Duration LEASE = Duration.ofMillis(900);
    private static final Duration COMMAND_TIMEOUT = Duration.ofMillis(300);
    /** How much later than its command timeout a call may return on a loaded machine; only a hang exceeds it. */
    private static final Duration SCHEDULING_SLACK = Duration.ofSeconds(1);
    private static final Duration MARGIN = Duration.ofSeconds(5);

    private final ExclusionChecker checker = new ExclusionChecker();
    private final List<LeaseLost> lost = new CopyOnWriteArrayList<>();

    @Test
    void partitionLongerThanTheLeaseTellsTheHolderBeforeAnybodyElseGetsIn() throws Exception {
        String name = "partitioned";
        try (RedisServer server = RedisServer.start();
                TcpProxy proxy = TcpProxy.to(server);
                RelockClient holder = FaultClients.renewing(proxy.uri(), LEASE, COMMAND_TIMEOUT, lost::add);
                RelockClient contender = FaultClients.renewing(server.uri(), LEASE, COMMAND_TIMEOUT, e -> { })) {
            LockHandle held = holder.lock(name).acquire();
            checker.enter(name, "holder", held.fencingToken());
            AtomicLong toldAt = new AtomicLong();
            held.whenLost().thenRun(() -> {
                toldAt.set(System.nanoTime());
                checker.leave(name, "holder", held.fencingToken());
            });

            // the holder's own count: its lease runs from the send of the last request Redis confirmed (it may only
            // move later until the partition)
            long lastConfirmed = lastConfirmedSend(holder);
            proxy.blackhole();
            try {
                // calls fail within the command timeout instead of hanging
                long start = System.nanoTime();
                assertThatThrownBy(() -> holder.lock("other").tryLock())
                        .isInstanceOf(RedisUnavailableException.class);
                assertThat(Duration.ofNanos(System.nanoTime() - start))
                        .isLessThan(COMMAND_TIMEOUT.plus(SCHEDULING_SLACK));

                Optional<LockHandle> taken = contender.lock(name).tryAcquire(LEASE.plus(MARGIN));
                long acquiredAt = System.nanoTime();
                long told = toldAt.get();
                assertThat(taken).as("the lease ran out in Redis").isPresent();
                try (LockHandle theirs = taken.get()) {
                    assertThat(told).as("the holder was told before the contender got in").isNotZero();
                    System.out.printf("measured: holder told %d ms after its last confirmed renewal was sent, the "
                                    + "contender got in %d ms after it (lease %d ms)%n",
                            TimeUnit.NANOSECONDS.toMillis(told - lastConfirmed),
                            TimeUnit.NANOSECONDS.toMillis(acquiredAt - lastConfirmed), LEASE.toMillis());
                    assertThat(told - acquiredAt).as("told before the contender got in").isNotPositive();
                    assertThat(told - lastConfirmed).as("not told before half its lease had passed")
                            .isGreaterThanOrEqualTo(LEASE.toNanos() / 2);
                    checker.enter(name, "contender", theirs.fencingToken());
                    assertThat(theirs.fencingToken()).isGreaterThan(held.fencingToken());
                    assertThat(checker.write(name, "contender", theirs.fencingToken())).isTrue();
                    assertThat(checker.write(name, "holder", held.fencingToken()))
                            .as("a late write of the told holder is refused all the same").isFalse();
                    assertThat(held.isValid()).isFalse();

                    long unlock = System.nanoTime();
                    assertThatThrownBy(held::close).isInstanceOf(LeaseLostException.class);
                    assertThat(Duration.ofNanos(System.nanoTime() - unlock))
                            .isLessThan(COMMAND_TIMEOUT.plus(SCHEDULING_SLACK));
                    checker.leave(name, "contender", theirs.fencingToken());
                }
            } finally {
                proxy.heal();
            }
            // the requests held in the partition arrive late now; none of them may disturb the lock
            await().atMost(MARGIN).until(() -> !lost.isEmpty());
            assertThat(lost).hasSize(1);
            try (LockHandle again = holder.lock(name).acquire()) {
                assertThat(again.fencingToken()).isGreaterThan(held.fencingToken());
            }
            assertThat(lost).as("told once").hasSize(1);
        }
        Report report = checker.report();
        assertThat(report.overlaps()).isZero();
        assertThat(report.tokenRegressions()).isZero();
        assertThat(report.writesRefused()).isEqualTo(1);
        assertThat(report.entries()).isEqualTo(2);
    }

    /**
     * When the request that last set the lease of {@code client}'s one hold was sent, by the client's own count; never
     * later than that, and within a millisecond of it unless this thread is held up on every try.
     */
    private static long lastConfirmedSend(RelockClient client) {
        long estimate = 0;
        for (int i = 0; i < 100; i++) {
            long before = System.nanoTime();
            Duration left = client.heldLocks().get(0).remainingLease();
            long after = System.nanoTime();
            estimate = before + left.toNanos() - LEASE.toNanos();
            if (after - before < TimeUnit.MILLISECONDS.toNanos(1)) {
                break;
            }
        }
        return estimate;
    }

    @Test
    void aRenewalThatGetsThroughAfterTheDeadlineIsReleasedNotLeftToExpire() throws Exception {
        // a one-way latency of a quarter lease: the first renewal leaves after the acquisition's reply (half a lease
        // after its send) and before the deadline, reaches Redis while the key lives, and its reply comes back at
        // least a full lease after the acquisition was sent, so after the deadline
        Duration lease = Duration.ofSeconds(2);
        Duration oneWay = lease.dividedBy(4);
        String name = "ambiguous";
        String key = "relock:{" + name + "}";
        try (RedisServer server = RedisServer.start();
                TcpProxy proxy = TcpProxy.to(server);
                KeyEvents events = KeyEvents.of(server, key);
                RelockClient holder = FaultClients.renewing(proxy.uri(), lease, lease, lost::add)) {
            // no NOSCRIPT round trip through the slow link
            server.execute("SCRIPT", "LOAD", SingleServerScripts.ACQUIRE.body());
            server.execute("SCRIPT", "LOAD", SingleServerScripts.RENEW.body());
            proxy.latency(oneWay);

            LockHandle held = holder.lock(name).acquire();
            AtomicLong toldAt = new AtomicLong();
            held.whenLost().thenRun(() -> toldAt.set(System.nanoTime()));
            await().atMost(MARGIN).until(() -> events.seen(0, "expire")); // the acquisition's
            int acquisitionEvents = events.size();

            // the release of the key by owner shows as del (nobody waits or reads), its expiry as expired
            await().atMost(lease.multipliedBy(3).plus(MARGIN))
                    .until(() -> events.seen(acquisitionEvents, "del") || events.seen(acquisitionEvents, "expired"));
            List<String> names = events.since(acquisitionEvents).stream().map(KeyEvents.Event::name).toList();
            System.out.printf("measured: key events after the acquisition: %s%n", names);
            assertThat(names).as("a renewal got through, then the key was released")
                    .containsSubsequence("expire", "del").doesNotContain("expired");
            long releasedAt = events.first(acquisitionEvents, "del").at();
            assertThat(toldAt.get()).as("the holder was told before the release").isNotZero();
            assertThat(toldAt.get() - releasedAt).as("told before the release").isNotPositive();
            assertThat(held.state()).isEqualTo(LeaseState.LOST);
            assertThat(server.execute("EXISTS", key)).isEqualTo("0");

            proxy.latency(Duration.ZERO);
            assertThatThrownBy(held::close).isInstanceOf(LeaseLostException.class);
            await().atMost(MARGIN).until(() -> !lost.isEmpty());
            assertThat(lost).as("told once").hasSize(1);
            assertThat(events.since(acquisitionEvents)).filteredOn(event -> event.name().equals("del"))
                    .as("released once").hasSize(1);
        }
    }

    @Test
    void theHoldIsRenewedAsSoonAsTheConnectionIsBack() throws Exception {
        // a long lease: the keeper's first pass comes a third of it after the client started, long after the reconnect
        Duration lease = Duration.ofSeconds(60);
        String name = "renewed-on-reconnect";
        String key = "relock:{" + name + "}";
        try (RedisServer server = RedisServer.start();
                TcpProxy proxy = TcpProxy.to(server);
                KeyEvents events = KeyEvents.of(server, key)) {
            long created = System.nanoTime();
            try (RelockClient holder = FaultClients.renewing(proxy.uri(), lease, COMMAND_TIMEOUT, lost::add)) {
                LockHandle held = holder.lock(name).acquire();
                await().atMost(MARGIN).until(() -> events.seen(0, "expire")); // the acquisition's
                int acquisitionEvents = events.size();
                long cut = System.nanoTime();
                proxy.cutConnections(); // Lettuce reconnects
                await().atMost(lease.dividedBy(3)).until(() -> events.seen(acquisitionEvents, "expire"));
                long renewedAt = events.first(acquisitionEvents, "expire").at();
                System.out.printf("measured: renewed %d ms after the connections were cut%n",
                        TimeUnit.NANOSECONDS.toMillis(renewedAt - cut));
                assertThat(renewedAt - (created + lease.toNanos() / 3)).as("renewed before the keeper's first pass")
                        .isNegative();
                assertThat(held.isValid()).isTrue();
                held.close();
            }
        }
        assertThat(lost).isEmpty();
    }

    @Test
    void connectionsResetWhileHoldingKeepTheHoldThroughTheReconnect() throws Exception {
        // the reconnect takes some 0.7 s on a busy machine and the renewal follows at once; the lease counts from the
        // last renewal before the reset, up to lease/3 earlier: a lease of 3 s rides that out on a loaded machine
        Duration lease = Duration.ofSeconds(3);
        try (RedisServer server = RedisServer.start();
                TcpProxy proxy = TcpProxy.to(server);
                RelockClient holder = FaultClients.renewing(proxy.uri(), lease, COMMAND_TIMEOUT, lost::add);
                RelockClient contender = FaultClients.renewing(server.uri(), lease, COMMAND_TIMEOUT, e -> { })) {
            LockHandle held = holder.lock("reset").acquire();
            proxy.cutConnections(); // both of the holder's connections are reset; Lettuce reconnects
            assertHeldThrough(lease.plus(Duration.ofMillis(500)), held, contender.lock("reset"));
            held.close();
        }
    }

    @Test
    void latencyWithinTheCommandTimeoutKeepsTheHold() throws Exception {
        Duration oneWay = Duration.ofMillis(50);
        // a longer lease and command timeout than the other tests': a loaded machine adds its own delays to the link's
        Duration lease = Duration.ofSeconds(3);
        Duration timeout = Duration.ofSeconds(1);
        try (RedisServer server = RedisServer.start();
                TcpProxy proxy = TcpProxy.to(server);
                RelockClient holder = FaultClients.renewing(proxy.uri(), lease, timeout, lost::add);
                RelockClient contender = FaultClients.renewing(server.uri(), lease, timeout, e -> { })) {
            LockHandle held = holder.lock("slow").acquire();
            proxy.latency(oneWay); // a round trip takes 100 ms more, within the command timeout
            assertHeldThrough(lease.multipliedBy(2), held, contender.lock("slow"));
            long start = System.nanoTime();
            held.close();
            assertThat(Duration.ofNanos(System.nanoTime() - start)).as("the release went through the slow link")
                    .isGreaterThanOrEqualTo(oneWay.multipliedBy(2));
        }
    }

    /** Renewals keep {@code held} for {@code window} while the contender is kept out, and no loss is reported. */
    private void assertHeldThrough(Duration window, LockHandle held, RelockLock contender) {
        await().during(window).atMost(window.plus(MARGIN)).pollInterval(Duration.ofMillis(100))
                .until(() -> held.isValid() && contender.tryAcquire(Duration.ZERO).isEmpty());
        assertThat(lost).isEmpty();
    }
}
