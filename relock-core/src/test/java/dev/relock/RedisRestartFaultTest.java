package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.relock.ExclusionChecker.Report;
import dev.relock.testredis.RedisServer;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Redis restarts while locks are held. Without persistence the locks are gone: a contender gets in at once, so
 * mutual exclusion breaks until the holder's client, which renews as soon as it has reconnected, hears that Redis no
 * longer has the lock, and the contender's token is still greater (tokens follow the server's clock), so a fenced
 * resource refuses the holder's late writes. With the append-only file and {@code appendfsync always} nothing is
 * lost. A restart delayed by the lease keeps exclusion even without persistence: the holder's client counts the lease
 * from the last renewal it sent and tells the holder at its deadline, before Redis is back.
 */
@Tag("redis")
class RedisRestartFaultTest {

    private static final Duration COMMAND_TIMEOUT = Duration.ofMillis(500);
    private static final Duration MARGIN = Duration.ofSeconds(5);
    private static final Duration RECONNECT = Duration.ofSeconds(15);

    private final ExclusionChecker checker = new ExclusionChecker();
    private final List<LeaseLost> lost = new CopyOnWriteArrayList<>();

    private RelockClient client(RedisServer server, Duration lease) {
        return FaultClients.renewing(server.uri(), lease, COMMAND_TIMEOUT, lost::add);
    }

    @Test
    void restartWithoutPersistenceTellsTheHolderWithinARenewalAndFencingCatchesTheOverlap() throws Exception {
        Duration lease = Duration.ofMillis(900); // renewed every 300 ms
        String name = "restart-no-persistence";
        try (RedisServer server = RedisServer.start();
                RelockClient holder = client(server, lease);
                RelockClient contender = client(server, lease)) {
            LockHandle held = holder.lock(name).acquire();
            checker.enter(name, "holder", held.fencingToken());
            assertThat(checker.write(name, "holder", held.fencingToken())).isTrue();

            server.kill();
            server.restart();
            long back = System.nanoTime();

            Optional<LockHandle> taken = await().atMost(RECONNECT)
                    .ignoreException(RedisUnavailableException.class)
                    .until(() -> contender.lock(name).tryAcquire(Duration.ZERO), Optional::isPresent);
            try (LockHandle theirs = taken.orElseThrow()) {
                checker.enter(name, "contender", theirs.fencingToken());
                assertThat(theirs.fencingToken()).as("server-time tokens rise across a restart that lost the counter")
                        .isGreaterThan(held.fencingToken());
                assertThat(checker.write(name, "contender", theirs.fencingToken())).isTrue();

                LeaseLost event = held.whenLost().toCompletableFuture()
                        .get(RECONNECT.toMillis(), TimeUnit.MILLISECONDS);
                long toldMillis = OneServerTestBase.millisSince(back);
                // the holder wrote once more before it heard: that is the overlap, and the resource refuses it
                assertThat(checker.write(name, "holder", held.fencingToken())).isFalse();
                checker.leave(name, "holder", held.fencingToken());
                assertThat(event.fencingToken()).isEqualTo(held.fencingToken());
                assertThatThrownBy(held::close).isInstanceOf(LeaseLostException.class);
                assertThat(theirs.isValid()).as("the lost hold's unlock left the new holder alone").isTrue();
                checker.leave(name, "contender", theirs.fencingToken());
                System.out.printf("measured: holder told %d ms after Redis was back (lease %d ms)%n", toldMillis,
                        lease.toMillis());
                // at the renewal that follows the reconnect, or at the deadline if that comes first; a bound, not a goal
                assertThat(toldMillis).as("ms from Redis back to the holder told").isLessThan(lease.toMillis() * 2);
            }
        }
        Report report = checker.report();
        assertThat(report.overlaps()).isEqualTo(1);
        assertThat(report.tokenRegressions()).isZero();
        assertThat(report.writesRefused()).isEqualTo(1);
    }

    @Test
    void restartWithAppendFsyncAlwaysKeepsEveryHold() throws Exception {
        Duration lease = Duration.ofMillis(2000); // longer than a kill and restart on a busy machine
        try (RedisServer server = RedisServer.builder().appendOnly(true).start();
                RelockClient holder = client(server, lease);
                RelockClient contender = client(server, lease)) {
            LockHandle first = holder.lock("aof-1").acquire();
            LockHandle second = holder.lock("aof-2").acquire();

            server.kill(); // SIGKILL: only what appendfsync always wrote survives
            server.restart();
            assertThat(server.execute("EXISTS", "relock:{aof-1}", "relock:{aof-2}")).isEqualTo("2");

            // renewals go on: the holds outlive their lease after the restart, and nobody else gets in
            await().during(lease.multipliedBy(3).dividedBy(2)).atMost(lease.multipliedBy(2).plus(MARGIN))
                    .until(() -> first.isValid() && second.isValid());
            await().atMost(RECONNECT).ignoreException(RedisUnavailableException.class)
                    .until(() -> !contender.lock("aof-1").tryLock());
            assertThat(contender.lock("aof-2").tryAcquire(Duration.ofMillis(200))).isEmpty();
            assertThat(lost).isEmpty();

            long firstToken = first.fencingToken();
            first.close();
            second.close();
            try (LockHandle next = contender.lock("aof-1").acquire()) {
                assertThat(next.fencingToken()).isGreaterThan(firstToken);
            }
        }
    }

    @Test
    void restartDelayedByTheLeaseKeepsExclusionWithoutPersistence() throws Exception {
        Duration lease = Duration.ofMillis(600);
        String name = "delayed-restart";
        try (RedisServer server = RedisServer.start();
                RelockClient holder = client(server, lease);
                RelockClient contender = client(server, lease)) {
            LockHandle held = holder.lock(name).acquire();
            checker.enter(name, "holder", held.fencingToken());

            AtomicLong toldAt = new AtomicLong();
            held.whenLost().thenRun(() -> {
                toldAt.set(System.nanoTime());
                checker.leave(name, "holder", held.fencingToken());
            });
            server.kill();
            long down = System.nanoTime();
            // on purpose: the fault is an outage of one lease, counted from after the last renewal was sent
            Thread.sleep(lease.toMillis());
            server.restart();
            long back = System.nanoTime();
            // the holder's client counts the lease from the last renewal it sent: it has told the holder by now
            long told = toldAt.get();
            System.out.printf("measured: holder told %d ms into the outage, Redis back after %d ms (lease %d ms)%n",
                    TimeUnit.NANOSECONDS.toMillis(told - down), TimeUnit.NANOSECONDS.toMillis(back - down),
                    lease.toMillis());
            assertThat(told).as("told before Redis was back").isNotZero();
            assertThat(told - back).as("told before Redis was back").isNotPositive();
            LeaseLost event = held.whenLost().toCompletableFuture().getNow(null);
            assertThat(event.fencingToken()).isEqualTo(held.fencingToken());

            LockHandle theirs = await().atMost(RECONNECT)
                    .ignoreException(RedisUnavailableException.class)
                    .until(() -> contender.lock(name).tryAcquire(Duration.ZERO), Optional::isPresent)
                    .orElseThrow();
            checker.enter(name, "contender", theirs.fencingToken());
            assertThat(theirs.fencingToken()).isGreaterThan(held.fencingToken());
            checker.leave(name, "contender", theirs.fencingToken());
            theirs.close();
            assertThatThrownBy(held::close).isInstanceOf(LeaseLostException.class);
        }
        assertThat(checker.report().violations()).isEmpty();
    }
}
