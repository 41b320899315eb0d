package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lettuce.core.RedisClient;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Invalid names, leases and settings fail fast with a message naming the problem; a closed client refuses work. */
class BadInputTest extends OneServerTestBase {

    // ---- lock names -------------------------------------------------------------------------

    @ParameterizedTest
    @ValueSource(strings = {"", " ", "\t\n", "\u2003"})
    void blankNamesAreRejected(String blank) {
        RelockClient client = newClient();
        assertThatThrownBy(() -> client.lock(blank))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("blank");
    }

    @Test
    void namesUpToTheLimitWorkAndLongerOnesAreRejected() {
        RelockClient client = newClient();
        String longest = "n".repeat(RelockClientBuilder.MAX_NAME_LENGTH);
        RelockLock lock = client.lock(longest);
        assertThat(lock.name()).isEqualTo(longest);
        assertThat(lock.tryLock()).isTrue();
        lock.unlock();

        String tooLong = longest + "n";
        assertThatThrownBy(() -> client.lock(tooLong))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(Integer.toString(RelockClientBuilder.MAX_NAME_LENGTH))
                .hasMessageContaining(Integer.toString(tooLong.length()));
    }

    @Test
    void namesWithSpecialCharactersAreLocksOfTheirOwn() {
        RelockClient client = newClient();
        RelockClient other = newClient();
        // pairs that would share keys if braces or percent signs were not escaped
        List<String> names = List.of(
                "a{b}", "a%7Bb%7D", "a%257Bb%257D", "a{b", "a}b", "{", "}", "}{", "%", "%25", "a b", "a  b",
                "zähler", "zahler", "€ 🔒 ключ", "a}:queue", "a", "a:queue", "a}:fence", "a:fence", "tab\there");
        for (String name : names) {
            RelockLock lock = client.lock(name);
            assertThat(lock.name()).isEqualTo(name);
            assertThat(lock.tryLock()).as("lock '%s' while the names before it are held", name).isTrue();
        }
        for (String name : names) {
            RelockLock seenElsewhere = other.lock(name);
            assertThat(seenElsewhere.isLocked()).as("'%s' is locked", name).isTrue();
            assertThat(seenElsewhere.tryLock()).as("'%s' from another client", name).isFalse();
        }
        for (String name : names) {
            client.lock(name).unlock();
            assertThat(other.lock(name).isLocked()).as("'%s' released", name).isFalse();
        }
        // the documented escaping: % { } become %25 %7B %7D inside the hash tag
        RelockLock braces = client.lock("x{1}%");
        braces.lock();
        try {
            assertThat(admin().exists("relock:{x%7B1%7D%25}")).isEqualTo(1);
        } finally {
            braces.unlock();
        }
    }

    /**
     * Review finding (issue 12, part 3): wake-up messages are lines, and a name with a newline broke every one
     * of them, so a waiter for such a lock slept until the holder's lease ran out (30 s here). Newlines are
     * escaped in keys now (%0A), and the waiter is woken by the release.
     */
    @Test
    void aWaiterForANameWithANewlineIsWokenByTheRelease() throws Exception {
        String name = "line\nbreak\r\n";
        RelockLock holder = newClient().lock(name);
        RelockClient waiting = newClient();
        holder.lock(); // the default 30 s lease: only a wake-up ends the wait soon
        CompletableFuture<LockHandle> waited = waiting.lock(name).acquireAsync().toCompletableFuture();
        await().atMost(HANG).until(() -> waiting.inspect(name).waiters() == 1);
        assertThat(admin().exists("relock:{line%0Abreak\r%0A}")).isEqualTo(1);
        long released = System.nanoTime();
        holder.unlock();
        try (LockHandle taken = waited.get(HANG.toMillis(), TimeUnit.MILLISECONDS)) {
            assertThat(taken.name()).isEqualTo(name);
            assertThat(millisSince(released)).as("ms from the release to the waiter's hold").isLessThan(5_000);
            assertThat(waiting.list("line*")).extracting(LockInfo::name).containsExactly(name);
        }
    }

    // ---- leases and waits ---------------------------------------------------------------------

    @Test
    void nonPositiveLeasesAreRejectedAndNothingIsAcquired() {
        RelockLock lock = newClient().lock("bad-lease");
        assertThatThrownBy(() -> lock.lock(0, TimeUnit.SECONDS))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lease");
        assertThatThrownBy(() -> lock.lock(-1, TimeUnit.MILLISECONDS))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lease");
        assertThatThrownBy(() -> lock.tryLock(1, 0, TimeUnit.SECONDS))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lease");
        assertThatThrownBy(() -> lock.tryLock(0, -5, TimeUnit.SECONDS))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lease");
        assertThatThrownBy(() -> lock.tryAcquire(Duration.ZERO, Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lease");
        assertThatThrownBy(() -> lock.tryAcquire(Duration.ZERO, Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lease");
        assertThat(lock.isLocked()).isFalse();
        assertThat(lock.getHoldCount()).isZero();
    }

    @Test
    void leasesShorterThanAMillisecondCountAsOne() throws Exception {
        RelockLock lock = newClient().lock("tiny-lease");
        RelockLock other = newClient().lock("tiny-lease");
        lock.lock(1, TimeUnit.NANOSECONDS);
        await().atMost(HANG).until(() -> !lock.isLocked());
        assertThat(other.tryLock()).isTrue();
        other.unlock();
        assertThatThrownBy(lock::unlock).isInstanceOf(LeaseLostException.class);
    }

    @Test
    void nullUnitsAndDurationsAreRejected() {
        RelockLock lock = newClient().lock("nulls");
        assertThatThrownBy(() -> lock.lock(1, null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> lock.tryLock(1, null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> lock.tryLock(1, 1, null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> lock.tryAcquire(null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> lock.tryAcquire(Duration.ZERO, null)).isInstanceOf(NullPointerException.class);
        assertThat(lock.isLocked()).isFalse();
    }

    // ---- builder ------------------------------------------------------------------------------

    @Test
    void defaultLeaseBelowTheMinimumIsRejected() {
        Duration tooShort = RelockClientBuilder.MIN_DEFAULT_LEASE.minusMillis(1);
        assertThatThrownBy(() -> RelockClient.builder().defaultLease(tooShort))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("defaultLease")
                .hasMessageContaining(Long.toString(RelockClientBuilder.MIN_DEFAULT_LEASE.toMillis()));
        assertThatThrownBy(() -> RelockClient.builder().defaultLease(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> RelockClient.builder().defaultLease(Duration.ofSeconds(-30)))
                .isInstanceOf(IllegalArgumentException.class);
        // the minimum itself is fine
        RelockClient client = newClient(b -> b.defaultLease(RelockClientBuilder.MIN_DEFAULT_LEASE));
        assertThat(client.settings().defaultLease()).isEqualTo(RelockClientBuilder.MIN_DEFAULT_LEASE);
    }

    @Test
    void nonPositiveTimeoutsAndGracesAreRejected() {
        for (Duration bad : List.of(Duration.ZERO, Duration.ofMillis(-1))) {
            assertThatThrownBy(() -> RelockClient.builder().commandTimeout(bad))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("commandTimeout");
            assertThatThrownBy(() -> RelockClient.builder().handoffGrace(bad))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("handoffGrace");
        }
        assertThatThrownBy(() -> RelockClient.builder().commandTimeout(null)).isInstanceOf(NullPointerException.class);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "  ", "app{1}", "{app", "app}"})
    void keyPrefixesThatAreBlankOrHaveBracesAreRejected(String prefix) {
        assertThatThrownBy(() -> RelockClient.builder().keyPrefix(prefix))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("keyPrefix");
    }

    @Test
    void aKeyPrefixSeparatesLocksOfTheSameName() {
        RelockLock billing = newClient(b -> b.keyPrefix("billing")).lock("job");
        RelockLock shipping = newClient(b -> b.keyPrefix("shipping")).lock("job");
        RelockLock billingElsewhere = newClient(b -> b.keyPrefix("billing")).lock("job");
        assertThat(billing.tryLock()).isTrue();
        try {
            assertThat(shipping.tryLock()).isTrue();
            shipping.unlock();
            assertThat(billingElsewhere.tryLock()).isFalse();
            assertThat(admin().exists("billing:{job}")).isEqualTo(1);
        } finally {
            billing.unlock();
        }
    }

    @Test
    void exactlyOneOfUriAndLettuceClientMustBeGiven() {
        assertThatThrownBy(() -> RelockClient.builder().build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("redisUri").hasMessageContaining("redisClient");
        RedisClient lettuce = RedisClient.create(redis.uri());
        try {
            assertThatThrownBy(() -> RelockClient.builder().redisUri(redis.uri()).redisClient(lettuce).build())
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("redisUri").hasMessageContaining("redisClient");

            // a Lettuce client alone works, and is left open at close
            try (RelockClient client = RelockClient.builder().redisClient(lettuce).build()) {
                RelockLock lock = client.lock("via-lettuce");
                assertThat(lock.tryLock()).isTrue();
                lock.unlock();
            }
            try (var stillUsable = lettuce.connect()) {
                assertThat(stillUsable.sync().ping()).isEqualTo("PONG");
            }
        } finally {
            lettuce.shutdown();
        }
        assertThatThrownBy(() -> RelockClient.builder().redisUri(null)).isInstanceOf(NullPointerException.class);
    }

    @ParameterizedTest
    @ValueSource(strings = {"redis://user:s3cret@[bad", "rediss://:s3cret@[bad", "redis://user:s3cret@host:99999",
            "redis://user:s3cret@host/notadatabase", "redis://user:s3cret@"})
    void invalidUrisAreRejectedWithoutRevealingThePassword(String uri) {
        assertThatThrownBy(() -> RelockClient.builder().redisUri(uri).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("redisUri")
                .hasMessageNotContaining("s3cret")
                .satisfies(e -> assertThat(e.getCause()).isNull());
    }

    /** Passwords with an unescaped '@' or '/', or a URI without '//': typos that make a URI invalid. */
    @ParameterizedTest
    @ValueSource(strings = {"redis://user:my@s3cret@[bad", "redis://user:my/s3cret@[bad", "redis:user:s3cret@host:6379"})
    void invalidUrisWithOddPasswordsAreRejectedWithoutRevealingThePassword(String uri) {
        assertThatThrownBy(() -> RelockClient.builder().redisUri(uri).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("redisUri")
                .hasMessageNotContaining("s3cret");
    }

    // ---- closed clients ----------------------------------------------------------------------

    @Test
    void aClosedClientRefusesWork() {
        RelockClient client = RelockClient.builder().redisUri(redis.uri()).build();
        RelockLock before = client.lock("closed");
        client.close();

        assertThatThrownBy(() -> client.lock("closed")).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
        assertThatThrownBy(before::lock).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(before::tryLock).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> before.tryLock(1, TimeUnit.SECONDS)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(before::lockInterruptibly).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(before::acquire).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> before.tryAcquire(Duration.ZERO)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(before::unlock).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(before::isLocked).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(before::remainingLease).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(before::fencingToken).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(before::forceUnlock).isInstanceOf(IllegalStateException.class);
        assertThat(before.isHeldByCurrentThread()).isFalse();
        assertThat(before.getHoldCount()).isZero();
    }

    @Test
    void closeReleasesHeldLocksAndIsIdempotent() throws Exception {
        RelockClient client = RelockClient.builder().redisUri(redis.uri()).build();
        RelockLock first = client.lock("released-by-close-1");
        RelockLock second = client.lock("released-by-close-2");
        first.lock();
        first.lock();
        LockHandle handle = second.acquire();
        CompletableFuture<Void> heldInAnotherThread = new CompletableFuture<>();
        RelockLock third = client.lock("released-by-close-3");
        CompletableFuture<Void> holder = inNewThread("holder", () -> {
            third.lock();
            heldInAnotherThread.complete(null);
            return null; // the thread ends without unlocking
        });
        resultOf(heldInAnotherThread);
        resultOf(holder);

        client.close();
        client.close();

        RelockClient other = newClient();
        for (String name : List.of("released-by-close-1", "released-by-close-2", "released-by-close-3")) {
            RelockLock lock = other.lock(name);
            assertThat(lock.tryLock()).as("'%s' right after close", name).isTrue();
            lock.unlock();
        }
        assertThat(handle.isValid()).isFalse();
        assertThat(handle.state()).isEqualTo(LeaseState.RELEASED);
        assertThat(first.isHeldByCurrentThread()).isFalse();
        assertThatCode(client::close).doesNotThrowAnyException();
    }

    @Test
    void aClosedClientHoldsNothing() {
        RelockClient client = RelockClient.builder().redisUri(redis.uri()).build();
        RelockLock lock = client.lock("held-at-close");
        lock.lock();
        lock.lock();
        client.close();
        assertThat(lock.isHeldByCurrentThread()).isFalse();
        assertThat(lock.getHoldCount()).as("holds after close released them").isZero();
    }

    @Test
    void closeWakesWaitingThreadsWhichFailWithIllegalState() throws Exception {
        RelockLock holder = newClient().lock("close-while-waiting");
        RelockClient closing = RelockClient.builder().redisUri(redis.uri()).build();
        RelockLock waiting = closing.lock("close-while-waiting");
        holder.lock();
        try {
            CompletableFuture<Void> waiter = inNewThread("waiter-of-closed-client", () -> {
                waiting.lock();
                waiting.unlock();
                return null;
            });
            await().atMost(HANG).until(() -> queue("close-while-waiting").size() == 1);

            closing.close();
            assertThatThrownBy(() -> waiter.get(5, TimeUnit.SECONDS))
                    .hasCauseInstanceOf(IllegalStateException.class)
                    .cause().hasMessageContaining("closed");
        } finally {
            holder.unlock();
        }
    }

    @Test
    void theWaitersOfAClosedClientLeaveTheQueue() throws Exception {
        RelockLock holder = newClient().lock("closed-waiter-leaves");
        RelockClient closing = RelockClient.builder().redisUri(redis.uri()).build();
        RelockLock waiting = closing.lock("closed-waiter-leaves");
        holder.lock();
        CompletableFuture<Void> waiter = inNewThread("waiter-of-closed-client", () -> {
            waiting.lock();
            waiting.unlock();
            return null;
        });
        await().atMost(HANG).until(() -> queue("closed-waiter-leaves").size() == 1);
        closing.close();
        assertThatThrownBy(() -> waiter.get(5, TimeUnit.SECONDS)).hasCauseInstanceOf(IllegalStateException.class);

        await().atMost(Duration.ofSeconds(5)).until(() -> queue("closed-waiter-leaves").isEmpty());
        holder.unlock();
        RelockLock newcomer = newClient().lock("closed-waiter-leaves");
        assertThat(newcomer.tryLock()).as("the lock right after its release, nobody alive in line").isTrue();
        newcomer.unlock();
    }
}
