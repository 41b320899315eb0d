package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.relock.fencing.RedisFence;
import dev.relock.fencing.StaleFencingTokenException;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.SlotHash;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link RedisFence} against a real server: a write goes through for a token not older than the
 * last one recorded for its key and is refused, changing nothing, for an older one; including the
 * case it exists for, a holder whose lease ran out writing after the next holder did.
 */
@Tag("redis")
class RedisFenceTest extends OneServerTestBase {

    private RedisClient userClient;
    private StatefulRedisConnection<String, String> userConnection;
    private RedisFence fence;

    @BeforeAll
    void connectAsTheUserWould() {
        userClient = RedisClient.create(redis.uri());
        userConnection = userClient.connect();
        fence = RedisFence.on(userConnection);
    }

    @AfterAll
    void disconnect() {
        userConnection.close();
        userClient.shutdown(Duration.ZERO, Duration.ofSeconds(2));
    }

    @Test
    void aNewerTokenWritesAndIsRecorded() {
        assertThat(fence.trySet("account:1", "100", 5)).as("first write, no token recorded yet").isTrue();
        assertThat(fence.trySet("account:1", "110", 7)).isTrue();
        assertThat(admin().get("account:1")).isEqualTo("110");
        assertThat(admin().get(RedisFence.tokenKey("account:1"))).isEqualTo("7");
        assertThat(admin().ttl(RedisFence.tokenKey("account:1"))).as("the token key never expires").isEqualTo(-1);
    }

    @Test
    void anOlderTokenIsRefusedAndChangesNothing() {
        fence.set("account:2", "100", 7);
        assertThat(fence.trySet("account:2", "50", 6)).isFalse();
        assertThatThrownBy(() -> fence.set("account:2", "50", 5))
                .isInstanceOfSatisfying(StaleFencingTokenException.class, stale -> {
                    assertThat(stale.resource()).isEqualTo("account:2");
                    assertThat(stale.token()).isEqualTo(5);
                    assertThat(stale.lastToken()).isEqualTo(7);
                })
                .hasMessage("write to account:2 refused: fencing token 5 is older than 7, the last token that wrote it");
        assertThat(admin().get("account:2")).isEqualTo("100");
        assertThat(admin().get(RedisFence.tokenKey("account:2"))).isEqualTo("7");
    }

    @Test
    void anEqualTokenWritesAgain() {
        fence.set("account:3", "100", 7);
        fence.set("account:3", "120", 7);
        assertThat(admin().get("account:3")).as("the same hold may write twice").isEqualTo("120");
    }

    @ParameterizedTest(name = "{0} then {1}")
    @CsvSource({"9, 10", "99, 100", "9007199254740992, 9007199254740993", "9223372036854775806, 9223372036854775807"})
    void tokensCompareExactlyAcrossLengthsAndBeyondLuaDoubles(long older, long newer) {
        fence.set("big", "newer", newer);
        assertThat(fence.trySet("big", "older", older)).isFalse();
        assertThat(fence.trySet("big", "newest", newer)).isTrue();
        assertThat(admin().get("big")).isEqualTo("newest");
    }

    @Test
    void aHolderWhoseLeaseRanOutIsRefusedAfterTheNextHolderWrote() throws Exception {
        RelockLock first = newClient().lock("account:4");
        RelockLock second = newClient().lock("account:4");

        // the first holder reads the balance, then stalls (a GC pause) past its explicit lease
        first.lock(300, TimeUnit.MILLISECONDS);
        long firstToken = first.fencingToken().orElseThrow();
        admin().set("account:4", "100");
        long seenByFirst = Long.parseLong(userConnection.sync().get("account:4"));
        await().atMost(HANG).until(() -> !first.isLocked());

        // meanwhile the second holder takes the lock and writes with its newer token
        long secondToken = resultOf(inNewThread("second", () -> {
            try (LockHandle held = second.tryAcquire(HANG).orElseThrow()) {
                fence.set("account:4", "150", held.fencingToken());
                return held.fencingToken();
            }
        }));
        assertThat(secondToken).isGreaterThan(firstToken);

        // the first holder wakes up and writes what it computed before the pause: refused
        assertThatThrownBy(() -> fence.set("account:4", Long.toString(seenByFirst + 10), firstToken))
                .isInstanceOfSatisfying(StaleFencingTokenException.class,
                        stale -> assertThat(stale.lastToken()).isEqualTo(secondToken));
        assertThat(admin().get("account:4")).as("the second holder's update survived").isEqualTo("150");
        assertThatThrownBy(first::unlock).isInstanceOf(LeaseLostException.class);
    }

    @Test
    void theReadmeSnippetRuns() {
        RelockClient client = newClient();
        StatefulRedisConnection<String, String> connection = userConnection;
        admin().set("account:42", "100");

        // as in docs/fencing.md, "Fencing at the resource"
        RedisFence fence = RedisFence.on(connection);          // your own Lettuce connection
        try (LockHandle held = client.lock("account:42").acquire()) {
            long balance = Long.parseLong(connection.sync().get("account:42"));
            fence.set("account:42", Long.toString(balance + 10), held.fencingToken());
        }

        assertThat(admin().get("account:42")).isEqualTo("110");
        assertThat(admin().get("{account:42}:fencing-token")).isNotNull();
    }

    @Test
    void theAsyncVariantsAnswerLikeTheBlockingOnes() throws Exception {
        assertThat(fence.trySetAsync("account:5", "100", 7).toCompletableFuture().get(HANG.toMillis(), TimeUnit.MILLISECONDS))
                .isTrue();
        assertThat(fence.trySetAsync("account:5", "90", 6).toCompletableFuture().get(HANG.toMillis(), TimeUnit.MILLISECONDS))
                .isFalse();
        assertThatThrownBy(() -> fence.setAsync("account:5", "80", 6).toCompletableFuture().get(HANG.toMillis(), TimeUnit.MILLISECONDS))
                .isInstanceOf(ExecutionException.class)
                .cause().isInstanceOf(StaleFencingTokenException.class);
        fence.setAsync("account:5", "130", 8).toCompletableFuture().get(HANG.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(admin().get("account:5")).isEqualTo("130");
    }

    @Test
    void aFlushedScriptCacheIsRefilled() throws Exception {
        fence.set("account:6", "100", 1);
        redis.scriptFlush();
        assertThat(fence.trySet("account:6", "110", 2)).isTrue();
        redis.scriptFlush();
        assertThat(fence.trySetAsync("account:6", "120", 3).toCompletableFuture().get(HANG.toMillis(), TimeUnit.MILLISECONDS))
                .isTrue();
        assertThat(admin().get("account:6")).isEqualTo("120");
    }

    @ParameterizedTest
    @CsvSource({
            "account:42, {account:42}:fencing-token",
            "{account}:42, {account}:42:fencing-token",
            "a{b, {a{b}:fencing-token"
    })
    void theTokenKeySharesTheResourcesClusterSlot(String key, String tokenKey) {
        assertThat(RedisFence.tokenKey(key)).isEqualTo(tokenKey);
        assertThat(SlotHash.getSlot(tokenKey)).isEqualTo(SlotHash.getSlot(key));
    }

    @ParameterizedTest
    @ValueSource(strings = {"a}b", "{}a", "a{}b}", "}"})
    void keysWithABraceButNoHashTagAreRejected(String key) {
        assertThatThrownBy(() -> fence.trySet(key, "v", 1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'" + key + "'")
                .hasMessageContaining("hash tag");
    }

    @Test
    void badArgumentsAreRejectedBeforeAnythingIsSent() {
        long calls = scriptCalls();
        assertThatThrownBy(() -> fence.trySet(null, "v", 1)).isInstanceOf(NullPointerException.class).hasMessage("key");
        assertThatThrownBy(() -> fence.trySet("k", null, 1)).isInstanceOf(NullPointerException.class).hasMessage("value");
        assertThatThrownBy(() -> fence.set("", "v", 1)).isInstanceOf(IllegalArgumentException.class).hasMessage("key is empty");
        assertThatThrownBy(() -> fence.set("k", "v", -1))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("fencing token -1 is negative");
        assertThatThrownBy(() -> fence.trySetAsync("k", "v", Long.MIN_VALUE))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("negative");
        assertThatThrownBy(() -> RedisFence.on((StatefulRedisConnection<String, String>) null))
                .isInstanceOf(NullPointerException.class).hasMessage("connection");
        assertThat(scriptCalls()).isEqualTo(calls);
        assertThat(admin().exists("k")).isZero();
    }

    @Test
    void aTokenKeyThatHoldsNoTokenIsReportedNotOverwritten() {
        admin().set(RedisFence.tokenKey("account:7"), "soon");
        assertThatThrownBy(() -> fence.trySet("account:7", "100", 1))
                .isInstanceOf(RedisCommandExecutionException.class)
                .hasMessageContaining("{account:7}:fencing-token holds soon, not a token");
        assertThat(admin().exists("account:7")).isZero();
    }
}
