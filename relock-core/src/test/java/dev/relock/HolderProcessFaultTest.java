package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;

import dev.relock.ExclusionChecker.Kind;
import dev.relock.ExclusionChecker.Report;
import dev.relock.testredis.RedisServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The holder's process fails, Redis is fine. A holder killed with kill -9 blocks its lock until its lease runs out
 * in Redis, not a moment longer and not a moment less, and the next holder's token is greater. A holder frozen
 * (SIGSTOP, as a long GC pause or a suspended VM) past its lease loses the lock to a holder with a greater token:
 * mutual exclusion breaks, which no lease can prevent, but the fenced resource refuses the frozen holder's write,
 * and once thawed the holder is told it lost the lock ({@code whenLost}, {@code LeaseLostException} from unlock).
 */
@Tag("redis")
class HolderProcessFaultTest {

    private static final Duration LEASE = LockHolderInChildJvm.LEASE;
    private static final Duration MARGIN = Duration.ofSeconds(5);
    /** Redis and this JVM read slightly different clocks (Redis: wall clock in ms) */
    private static final long CLOCK_SLACK_MILLIS = 10;

    @TempDir
    Path tmp;

    private final ExclusionChecker checker = new ExclusionChecker();

    private static RelockClient contenderClient(RedisServer server) {
        return RelockClient.builder().redisUri(server.uri()).commandTimeout(Duration.ofSeconds(1)).build();
    }

    @Test
    void killedHolderIsTakenOverWhenItsLeaseEndsNeverBefore() throws Exception {
        String lock = "process-kill";
        try (RedisServer server = RedisServer.start();
                RelockClient client = contenderClient(server);
                ChildJvm child = ChildJvm.holding(server.uri(), lock, LEASE, checker, tmp)) {
            RelockLock contender = client.lock(lock);
            assertThat(contender.tryLock()).as("lock held by the child JVM").isFalse();
            assertThat(contender.fencingToken()).hasValue(child.token());

            long beforeKill = System.nanoTime();
            long leaseLeftMillis = Long.parseLong(server.execute("PTTL", "relock:{" + lock + "}"));
            child.kill(); // SIGKILL: no release, no shutdown hook
            checker.add(new ExclusionChecker.Event(Kind.LEAVE, lock, "child-" + child.pid(), child.token(),
                    System.nanoTime()));

            Optional<LockHandle> taken = contender.tryAcquire(LEASE.plus(MARGIN));
            long waitedMillis = OneServerTestBase.millisSince(beforeKill);
            assertThat(taken).as("lock taken over after the killed holder's lease").isPresent();
            try (LockHandle handle = taken.get()) {
                checker.enter(lock, "contender", handle.fencingToken());
                assertThat(handle.fencingToken()).isGreaterThan(child.token());
                assertThat(handle.isValid()).isTrue();
                checker.leave(lock, "contender", handle.fencingToken());
            }
            System.out.printf("measured: lock free %d ms after the kill, %d ms of lease were left%n", waitedMillis,
                    leaseLeftMillis);
            assertThat(waitedMillis).as("not before the lease left at the kill (%s ms) ran out", leaseLeftMillis)
                    .isGreaterThanOrEqualTo(leaseLeftMillis - CLOCK_SLACK_MILLIS)
                    .isLessThanOrEqualTo(LEASE.plus(MARGIN).toMillis());
        }
        Report report = checker.report();
        assertThat(report.violations()).isEmpty();
        assertThat(report.entries()).isEqualTo(2);
    }

    @Test
    void pausedHolderLosesToALargerTokenAndIsToldWhenResumed() throws Exception {
        String lock = "process-pause";
        try (RedisServer server = RedisServer.start();
                RelockClient client = contenderClient(server);
                ChildJvm child = ChildJvm.holding(server.uri(), lock, LEASE, checker, tmp)) {
            child.send("WRITE");
            child.awaitLine("EXCL WRITE", MARGIN);
            child.pause();

            Optional<LockHandle> taken = client.lock(lock).tryAcquire(LEASE.plus(MARGIN));
            assertThat(taken).as("lock taken while its holder is frozen past its lease").isPresent();
            try (LockHandle handle = taken.get()) {
                checker.enter(lock, "contender", handle.fencingToken());
                assertThat(handle.fencingToken()).isGreaterThan(child.token());
                assertThat(checker.write(lock, "contender", handle.fencingToken())).isTrue();

                long resumed = System.nanoTime();
                child.resume();
                assertThat(child.awaitLine("LOST ", MARGIN)).isEqualTo("LOST " + child.token());
                long toldMillis = OneServerTestBase.millisSince(resumed);
                child.send("WRITE"); // a stale write: the resource has seen the contender's greater token
                child.send("UNLOCK");
                assertThat(child.awaitLine("UNLOCK", MARGIN)).isEqualTo("UNLOCK-FAILED LeaseLostException");
                child.awaitLine("EXCL LEAVE", MARGIN);

                assertThat(handle.isValid()).as("the thawed holder's unlock left the new holder alone").isTrue();
                assertThat(client.lock(lock).fencingToken()).hasValue(handle.fencingToken());
                checker.leave(lock, "contender", handle.fencingToken());
                System.out.printf("measured: frozen holder told %d ms after SIGCONT (lease %d ms)%n", toldMillis,
                        LEASE.toMillis());
                assertThat(toldMillis).as("told within a renewal period of waking up")
                        .isLessThanOrEqualTo(LEASE.toMillis());
            }
        }
        Report report = checker.report();
        assertThat(report.overlaps()).as("the frozen holder still believed it held the lock").isEqualTo(1);
        assertThat(report.tokenRegressions()).isZero();
        assertThat(report.writesAccepted()).isEqualTo(2);
        assertThat(report.writesRefused()).as("the stale write, caught by fencing").isEqualTo(1);
    }
}
