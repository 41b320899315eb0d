package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lettuce.core.RedisClient;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Input whose handling depends on the single-server engine or its builder settings: the keys that
 * names and prefixes become, leases shorter than a millisecond, a Lettuce client or URI of one
 * server. Names, leases and settings every deployment refuses alike are {@code contract/BadInputContract}.
 */
@Tag("redis")
class BadInputTest extends OneServerTestBase {

    /**
     * The documented key layout: {@code %}, braces and newlines are escaped as {@code %25}, {@code %7B},
     * {@code %7D}, {@code %0A} inside the hash tag (wake-up messages are lines, so no key holds a
     * newline), and the prefix replaces {@code relock}.
     */
    @Test
    void keysInRedisAreNamedAsDocumented() {
        RelockClient client = newClient();
        RelockLock braces = client.lock("x{1}%");
        RelockLock lineBreaks = client.lock("line\nbreak\r\n");
        RelockLock prefixed = newClient(b -> b.keyPrefix("billing")).lock("job");
        braces.lock();
        lineBreaks.lock();
        prefixed.lock();
        try {
            assertThat(admin().exists("relock:{x%7B1%7D%25}")).isEqualTo(1);
            assertThat(admin().exists("relock:{line%0Abreak\r%0A}")).isEqualTo(1);
            assertThat(admin().exists("billing:{job}")).isEqualTo(1);
        } finally {
            prefixed.unlock();
            lineBreaks.unlock();
            braces.unlock();
        }
    }

    /** Redlock refuses such a lease instead: it is within its clock drift allowance (RedlockBadInputTest). */
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
    @ValueSource(strings = {"", "  ", "a-name-of-sixty-five-characters-is-one-too-long-for-a-connection!"})
    void blankOrOverlongApplicationNamesAndLabelsAreRefusedNamingTheSetting(String value) {
        assertThatThrownBy(() -> RelockClient.builder().applicationName(value))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("applicationName");
        assertThatThrownBy(() -> RelockClient.builder().clientLabel(value))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("clientLabel");
        assertThatThrownBy(() -> RelockClient.builder().clientLabel(null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("clientLabel");
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
}
