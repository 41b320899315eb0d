package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.relock.ExclusionChecker.Report;
import io.lettuce.core.RedisCommandExecutionException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code maxmemory} with an evicting policy may drop held locks: every relock key has a TTL, so the {@code volatile-*}
 * policies may evict them as well as the {@code allkeys-*} ones. A client warns at start when the server's policy is
 * one of them, says nothing under {@code noeviction}, and goes on quietly when it may not read the policy. An evicted
 * lock is like a flushed one: a contender gets in at once and the holder is told at its next renewal.
 */
@Tag("redis")
class EvictionFaultTest extends OneServerTestBase {

    private static final String WARNING = "WARN dev.relock.internal.single.EvictionPolicyCheck";

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"allkeys-lru", "allkeys-lfu", "allkeys-random",
            "volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl"})
    void clientWarnsAtStartWhenThePolicyCanEvictLockKeys(String policy) {
        admin().configSet("maxmemory-policy", policy);
        try (StderrCapture err = new StderrCapture()) {
            newClient();
            assertThat(err.text()).contains(WARNING).contains("maxmemory-policy " + policy)
                    .contains("127.0.0.1:" + redis.port()).contains("noeviction");
        } finally {
            admin().configSet("maxmemory-policy", "noeviction");
        }
    }

    @Test
    void noWarningUnderNoeviction() {
        admin().configSet("maxmemory-policy", "noeviction");
        try (StderrCapture err = new StderrCapture()) {
            newClient();
            assertThat(err.text()).doesNotContain("EvictionPolicyCheck");
        }
    }

    @Test
    void aClientThatMayNotRunConfigStartsWithoutWarning() throws Exception {
        admin().configSet("maxmemory-policy", "allkeys-lru");
        redis.execute("ACL", "SETUSER", "no-config", "on", ">secret", "~*", "&*", "+@all", "-config");
        try (StderrCapture err = new StderrCapture()) {
            RelockClient client = newClient(b -> b.redisUri(
                    "redis://no-config:secret@127.0.0.1:" + redis.port()));
            assertThat(err.text()).doesNotContain(WARNING)
                    .contains("DEBUG dev.relock.internal.single.EvictionPolicyCheck")
                    .contains("cannot read maxmemory-policy")
                    .doesNotContain("secret");
            RelockLock lock = client.lock("no-config");
            assertThat(lock.tryLock()).isTrue();
            lock.unlock();
        } finally {
            admin().configSet("maxmemory-policy", "noeviction");
            redis.execute("ACL", "DELUSER", "no-config");
        }
    }

    @Test
    void evictionDropsAHeldLockAndTheHolderIsTold() throws Exception {
        ExclusionChecker checker = new ExclusionChecker();
        List<LeaseLost> lost = new CopyOnWriteArrayList<>();
        String name = "evicted";
        // volatile-ttl evicts the keys with the shortest TTL first: lock keys, never the filler below (no TTL)
        admin().configSet("maxmemory-policy", "volatile-ttl");
        try {
            RelockClient holder = newClient(b -> b.defaultLease(Duration.ofSeconds(1)).leaseLostListener(lost::add));
            RelockClient contender = newClient();
            LockHandle held = holder.lock(name).acquire();
            checker.enter(name, "holder", held.fencingToken());
            assertThat(checker.write(name, "holder", held.fencingToken())).isTrue();

            long used = Long.parseLong(admin().info("memory").replaceAll("(?s).*used_memory:(\\d+).*", "$1"));
            admin().configSet("maxmemory", Long.toString(used + 512 * 1024));
            String filler = "x".repeat(8 * 1024);
            int written = 0;
            while (admin().exists("relock:{" + name + "}") == 1) {
                assertThat(written).as("filler keys written without evicting the lock").isLessThan(1_000);
                try {
                    admin().set("filler:" + written++, filler);
                } catch (RedisCommandExecutionException e) {
                    // OOM: Redis evicted every key it may (the lock's among them) and is still over maxmemory
                    assertThat(e).hasMessageStartingWith("OOM");
                }
            }
            admin().configSet("maxmemory", "0"); // the pressure ends; the lock stays gone

            LockHandle theirs = contender.lock(name).tryAcquire(Duration.ZERO).orElseThrow();
            checker.enter(name, "contender", theirs.fencingToken());
            assertThat(theirs.fencingToken()).isGreaterThan(held.fencingToken());
            assertThat(checker.write(name, "contender", theirs.fencingToken())).isTrue();

            LeaseLost event = held.whenLost().toCompletableFuture().get(HANG.toMillis(), TimeUnit.MILLISECONDS);
            assertThat(event.reason()).contains("no longer had it");
            assertThat(checker.write(name, "holder", held.fencingToken())).isFalse();
            checker.leave(name, "holder", held.fencingToken());
            await().atMost(HANG).until(() -> !lost.isEmpty()); // the listener runs just after whenLost completes
            assertThat(lost).containsExactly(event);
            assertThatThrownBy(held::close).isInstanceOf(LeaseLostException.class);
            theirs.close();
            checker.leave(name, "contender", theirs.fencingToken());
        } finally {
            admin().configSet("maxmemory", "0");
            admin().configSet("maxmemory-policy", "noeviction");
        }
        Report report = checker.report();
        assertThat(report.overlaps()).isEqualTo(1);
        assertThat(report.tokenRegressions()).isZero();
        assertThat(report.writesRefused()).isEqualTo(1);
    }
}
