package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.relock.testredis.RedisServer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** What operators see: inspect() and list() against real holders and waiters. */
class InspectionTest {

    private static RedisServer server;

    @BeforeAll
    static void startRedis() {
        server = RedisServer.start();
    }

    @AfterAll
    static void stopRedis() {
        server.close();
    }

    @Test
    void inspectShowsHolderTokenLeaseAndWaiters() throws Exception {
        try (RelockClient holder = RelockClient.create(server.uri());
                RelockClient other = RelockClient.create(server.uri())) {
            RelockLock lock = holder.lock("inspect:held");
            assertThat(holder.inspect("inspect:held").isHeld()).isFalse();

            lock.lock();
            lock.lock();
            CountDownLatch waiting = new CountDownLatch(1);
            Thread waiter = new Thread(() -> {
                waiting.countDown();
                other.lock("inspect:held").lock();
                other.lock("inspect:held").unlock();
            });
            waiter.start();
            waiting.await();
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> other.inspect("inspect:held").waiters() == 1);

            LockInfo info = other.inspect("inspect:held");
            assertThat(info.name()).isEqualTo("inspect:held");
            assertThat(info.kind()).isEqualTo(LockKind.EXCLUSIVE);
            assertThat(info.holders()).hasSize(1);
            String owner = info.holders().keySet().iterator().next();
            assertThat(owner).startsWith(holder.clientId() + ":");
            assertThat(info.holders().get(owner)).isEqualTo(2);
            assertThat(info.fencingToken()).isEqualTo(lock.fencingToken().orElseThrow());
            assertThat(info.remainingLease()).isPositive()
                    .isLessThanOrEqualTo(holder.settings().defaultLease());

            lock.unlock();
            lock.unlock();
            waiter.join(TimeUnit.SECONDS.toMillis(10));
            assertThat(waiter.isAlive()).isFalse();
            LockInfo free = other.inspect("inspect:held");
            assertThat(free.isHeld()).isFalse();
            assertThat(free.fencingToken()).isZero();
            assertThat(free.remainingLease()).isZero();
            assertThat(free.waiters()).isZero();
        }
    }

    @Test
    void listFindsHeldLocksByGlobIncludingEscapedNames() {
        try (RelockClient client = RelockClient.create(server.uri());
                RelockClient otherPrefix = RelockClient.builder().redisUri(server.uri()).keyPrefix("elsewhere").build()) {
            client.lock("list:a").lock();
            client.lock("list:{b}%").lock();
            client.lock("other:c").lock();
            otherPrefix.lock("list:hidden").lock();
            client.lock("list:released").lock();
            client.lock("list:released").unlock();
            server.execute("SET", "relock:{list:not-a-lock}", "text");

            List<LockInfo> listed = client.list("list:*");
            assertThat(listed).extracting(LockInfo::name).containsExactly("list:a", "list:{b}%");
            assertThat(client.list("*")).extracting(LockInfo::name)
                    .containsExactly("list:a", "list:{b}%", "other:c");
            assertThat(client.list("list:{b}*")).extracting(LockInfo::name).containsExactly("list:{b}%");
            assertThat(otherPrefix.list("*")).extracting(LockInfo::name).containsExactly("list:hidden");
        }
    }

    @Test
    void semaphoresAreInspectedAndListedBesideLocks() throws Exception {
        try (RelockClient client = RelockClient.create(server.uri())) {
            RelockSemaphore pool = client.semaphore("sem:pool");
            pool.trySetPermits(3);
            client.lock("sem:pool").lock();
            try (PermitHandle held = pool.acquire(2)) {
                LockInfo info = client.inspectSemaphore("sem:pool");
                assertThat(info.kind()).isEqualTo(LockKind.SEMAPHORE);
                assertThat(info.permits()).isEqualTo(3);
                assertThat(info.holders()).hasSize(1).containsValue(2);
                assertThat(info.holders().keySet().iterator().next()).startsWith(client.clientId() + ":h");
                assertThat(info.remainingLease()).isPositive();

                assertThat(client.list("sem:*")).extracting(LockInfo::name, LockInfo::kind).containsExactly(
                        org.assertj.core.groups.Tuple.tuple("sem:pool", LockKind.EXCLUSIVE),
                        org.assertj.core.groups.Tuple.tuple("sem:pool", LockKind.SEMAPHORE));
            }
            assertThat(client.inspectSemaphore("sem:pool").holders()).isEmpty();
            assertThat(client.inspectSemaphore("sem:unset").permits()).isEqualTo(-1);
            client.lock("sem:pool").unlock();
            server.execute("DEL", "relock:{sem:pool}:sem");
        }
    }
}
