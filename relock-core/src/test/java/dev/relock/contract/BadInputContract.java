package dev.relock.contract;

import static dev.relock.contract.Polling.soon;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.relock.LockHandle;
import dev.relock.LockInfo;
import dev.relock.RelockClient;
import dev.relock.RelockClientBuilder;
import dev.relock.RelockLock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Names and arguments, as every deployment must take them: any name up to the limit is a lock of its
 * own, whatever characters it has; a bad name, lease, wait or setting fails at once with a message
 * that says what was wrong, and nothing is acquired.
 */
abstract class BadInputContract extends ContractBase {

    /**
     * Among the names: some that would share keys if braces or percent signs were not escaped, and names
     * with line breaks: wake-up messages are lines, and a name with a newline once broke every one of
     * them, so a waiter for such a lock slept until the holder's lease ran out (review finding, issue 12,
     * part 3). A key prefix makes a namespace of its own. Nothing is acquired by a refused call.
     */
    @Test
    void everyNameUpToTheLimitIsALockOfItsOwnAndBadNamesLeasesWaitsAndSettingsAreRefusedWithWhatWasWrong() throws Exception {
        RelockClient client = newClient();
        RelockClient other = newClient();
        for (String blank : List.of("", " ", "\t\n", "\u2003")) {
            assertThatThrownBy(() -> client.lock(blank)).as("lock(\"%s\")", blank)
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("blank");
        }
        // sent as UTF-8, which an unpaired surrogate does not have: such names would share keys ('?')
        for (String malformed : List.of("a\uD800", "\uDC00", "x\uD800y", "\uDC00\uD83D")) {
            assertThatThrownBy(() -> client.lock(malformed)).as("lock with an unpaired surrogate")
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("unpaired surrogate");
        }
        assertThatThrownBy(() -> client.multiLock("ok", "\uD800")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unpaired surrogate");
        assertThatThrownBy(() -> client.readWriteLock(null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("lock name");
        assertThatThrownBy(() -> client.readWriteLock(" ")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("blank");
        assertThatThrownBy(() -> client.multiLock()).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at least one name");
        assertThatThrownBy(() -> client.multiLock("a", null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> client.list(null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("nameGlob");
        assertThatThrownBy(() -> client.inspect(null)).isInstanceOf(NullPointerException.class);

        String longest = "n".repeat(RelockClientBuilder.MAX_NAME_LENGTH);
        RelockLock longestLock = client.lock(longest);
        assertThat(longestLock.name()).isEqualTo(longest);
        assertThat(longestLock.tryLock()).isTrue();
        longestLock.unlock();
        String tooLong = longest + "n";
        assertThatThrownBy(() -> client.lock(tooLong))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(Integer.toString(RelockClientBuilder.MAX_NAME_LENGTH))
                .hasMessageContaining(Integer.toString(tooLong.length()));

        List<String> names = List.of(
                "a{b}", "a%7Bb%7D", "a%257Bb%257D", "a{b", "a}b", "{", "}", "}{", "%", "%25", "a b", "a  b",
                "zähler", "zahler", "€ 🔒 ключ", "a}:queue", "a", "a:queue", "a}:fence", "a:fence", "tab\there",
                "line\nbreak", "line%0Abreak");
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

        String lineBreaks = "line\nbreak\r\n";
        RelockLock holder = client.lock(lineBreaks);
        holder.lock(); // the default lease of 30 s: only a wake-up ends the wait soon
        CompletableFuture<LockHandle> waited = other.lock(lineBreaks).acquireAsync().toCompletableFuture();
        soon().until(() -> other.inspect(lineBreaks).waiters() == 1);
        long released = System.nanoTime();
        holder.unlock();
        try (LockHandle taken = resultOf(waited)) {
            assertThat(taken.name()).isEqualTo(lineBreaks);
            assertThat(millisSince(released)).as("ms from the release to the waiter's hold").isLessThan(5_000);
            assertThat(other.list("line*")).extracting(LockInfo::name).containsExactly(lineBreaks);
        }

        // the same name under other prefixes
        RelockLock billing = newClient(b -> b.keyPrefix("billing")).lock("job");
        RelockLock shipping = newClient(b -> b.keyPrefix("shipping")).lock("job");
        RelockLock billingElsewhere = newClient(b -> b.keyPrefix("billing")).lock("job");
        assertThat(billing.tryLock()).isTrue();
        try {
            assertThat(shipping.tryLock()).isTrue();
            shipping.unlock();
            assertThat(billingElsewhere.tryLock()).isFalse();
        } finally {
            billing.unlock();
        }
        assertThat(billingElsewhere.tryLock()).isTrue();
        billingElsewhere.unlock();

        // leases, waits, units and settings
        RelockLock leased = client.lock("bad-lease");
        RelockLock read = client.readWriteLock("bad-read").readLock();
        assertThatThrownBy(() -> leased.lock(0, TimeUnit.SECONDS))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lease");
        assertThatThrownBy(() -> leased.lock(-1, TimeUnit.MILLISECONDS))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lease");
        assertThatThrownBy(() -> leased.tryLock(1, 0, TimeUnit.SECONDS))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lease");
        assertThatThrownBy(() -> leased.tryLock(0, -5, TimeUnit.SECONDS))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lease");
        assertThatThrownBy(() -> leased.tryAcquire(Duration.ZERO, Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lease");
        assertThatThrownBy(() -> leased.tryAcquireAsync(Duration.ZERO, Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lease of lock 'bad-lease' must be positive");

        assertThatThrownBy(() -> leased.lock(1, null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> leased.tryLock(1, null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> leased.tryLock(1, 1, null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> leased.tryAcquire(null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> leased.tryAcquire(Duration.ZERO, null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> leased.tryAcquireAsync(null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("wait");
        assertThatThrownBy(() -> leased.tryAcquireAsync(Duration.ZERO, null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("lease");
        assertThatThrownBy(() -> read.tryAcquireAsync(null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("wait");
        assertThatThrownBy(() -> read.tryAcquireAsync(Duration.ZERO, Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lease of lock 'bad-read'");
        assertThat(leased.isLocked()).isFalse();
        assertThat(leased.getHoldCount()).isZero();
        assertThat(read.isLocked()).isFalse();

        try (LockHandle handle = leased.acquire()) {
            assertThatThrownBy(() -> handle.releaseAfter(null)).isInstanceOf(NullPointerException.class)
                    .hasMessageContaining("delay");
            assertThat(handle.isValid()).as("the hold after a refused releaseAfter").isTrue();
        }

        Duration tooShort = RelockClientBuilder.MIN_DEFAULT_LEASE.minusMillis(1);
        assertThatThrownBy(() -> RelockClient.builder().defaultLease(tooShort))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("defaultLease")
                .hasMessageContaining(Long.toString(RelockClientBuilder.MIN_DEFAULT_LEASE.toMillis()));
        assertThatThrownBy(() -> RelockClient.builder().defaultLease(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> RelockClient.builder().defaultLease(Duration.ofSeconds(-30)))
                .isInstanceOf(IllegalArgumentException.class);
        for (Duration bad : List.of(Duration.ZERO, Duration.ofMillis(-1))) {
            assertThatThrownBy(() -> RelockClient.builder().commandTimeout(bad))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("commandTimeout");
            assertThatThrownBy(() -> RelockClient.builder().handoffGrace(bad))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("handoffGrace");
        }
        assertThatThrownBy(() -> RelockClient.builder().commandTimeout(null)).isInstanceOf(NullPointerException.class);
        for (String prefix : List.of("", "  ", "app{1}", "{app", "app}")) {
            assertThatThrownBy(() -> RelockClient.builder().keyPrefix(prefix)).as("keyPrefix(\"%s\")", prefix)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("keyPrefix");
        }
        RelockClientBuilder builder = RelockClient.builder();
        assertThatThrownBy(() -> builder.meterRegistry(null))
                .isInstanceOf(NullPointerException.class).hasMessage("meterRegistry");
        assertThatThrownBy(() -> builder.observationRegistry(null))
                .isInstanceOf(NullPointerException.class).hasMessage("observationRegistry");
        assertThatThrownBy(() -> builder.metricsGroup(null))
                .isInstanceOf(NullPointerException.class).hasMessage("metricsGroup");

        // the shortest default lease itself is fine
        RelockClient shortest = newClient(b -> b.defaultLease(RelockClientBuilder.MIN_DEFAULT_LEASE));
        assertThat(shortest.settings().defaultLease()).isEqualTo(RelockClientBuilder.MIN_DEFAULT_LEASE);
    }
}
