package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;

import dev.relock.internal.script.RedlockScripts;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A Redlock writer whose wait ends within a millisecond is refused with a mark of 1 ms (what is left of its wait). The
 * node must still queue it and answer its place: PEXPIRE deletes a key at once when the expiry it computed has passed
 * by its next reading of the clock, which on Redis 6.2 a TTL of 1 ms often does, and the client then got a nil place
 * (CI's second pass, RedlockGrantTest, failed so with a NullPointerException). acquire.lua now reads the place before it
 * sets the queue's time to live, and every script keeps such keys at least 10 ms (common.lua's keep_alive). The scripts
 * run directly, each try on fresh keys. The clock must tick between two readings less than a microsecond apart, so
 * few tries in thousands showed the fault on a quiet machine, more on a loaded one: {@value #TRIES} tries, pipelined,
 * take a few seconds.
 */
@Tag("redis")
class ShortMarkTest extends OneServerTestBase {

    private static final int TRIES = 20_000;
    // tries sent at once on one connection, their replies awaited together: a try costs no round trip of its own
    private static final int BATCH = 500;

    @Test
    void aWriterRefusedWithAMarkOfOneMillisecondIsQueuedAndToldItsPlace() throws Exception {
        RedisClient client = RedisClient.create(redis.uri());
        try (StatefulRedisConnection<String, String> connection = client.connect()) {
            RedisAsyncCommands<String, String> redis = connection.async();
            String sha = connection.sync().scriptLoad(RedlockScripts.ACQUIRE.body());
            for (int first = 0; first < TRIES; first += BATCH) {
                List<RedisFuture<List<Object>>> held = new ArrayList<>();
                List<RedisFuture<List<Object>>> refused = new ArrayList<>();
                for (int i = first; i < first + BATCH; i++) {
                    String[] keys = LockScripts.keys("short-mark-" + i);
                    held.add(acquire(redis, sha, keys, "holder", "0"));
                    refused.add(acquire(redis, sha, keys, "waiter", "1"));
                    redis.del(keys);
                }
                for (int i = 0; i < BATCH; i++) {
                    assertThat(held.get(i).get(HANG.toMillis(), TimeUnit.MILLISECONDS).get(0))
                            .as("the holder's try %d", first + i).isEqualTo(1L);
                    List<Object> answer = refused.get(i).get(HANG.toMillis(), TimeUnit.MILLISECONDS);
                    assertThat(answer.get(0)).as("the waiter's try %d", first + i).isEqualTo(0L);
                    assertThat(answer.get(3)).as("the place of try %d", first + i).isNotNull().isNotEqualTo("");
                }
            }
        } finally {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }

    private static RedisFuture<List<Object>> acquire(RedisAsyncCommands<String, String> redis, String sha,
            String[] keys, String owner, String markMillis) {
        // ARGV: owner, lease, mark, waited us, attempt id, token proposal, place (see redlock/acquire.lua)
        return redis.evalsha(sha, ScriptOutputType.MULTI, keys, owner, "30000", markMillis, "0", "1", "0", "");
    }
}
