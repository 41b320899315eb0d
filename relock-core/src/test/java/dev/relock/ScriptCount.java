package dev.relock;

import static org.awaitility.Awaitility.await;

import dev.relock.testredis.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.TransactionResult;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The lock scripts a test's own server has run: its EVALSHA and EVAL calls (INFO commandstats) less the writes of
 * clients' identity records, which clients send in the background (after a lease keeper pass, and when a new owner
 * begins to hold), and which keyspace notifications count (an {@code hset} of a {@code relock:client:*} key each).
 * Switches those notifications on for the whole server: only for a server the test started. Public for the tests of
 * every topology.
 */
public final class ScriptCount implements AutoCloseable {

    private static final Duration HANG = Duration.ofSeconds(10);

    private final RedisClient client;
    // a key of this server (on a Cluster node, of a slot it serves), written with each INFO
    private final String marker;
    private final StatefulRedisConnection<String, String> snapshots;
    private final StatefulRedisPubSubConnection<String, String> notifications;
    private final AtomicLong recordWrites = new AtomicLong();
    // for each marker written, in order: the record writes notified before it
    private final List<Long> recordWritesAtMarkers = new CopyOnWriteArrayList<>();

    private ScriptCount(RedisClient client, String marker) {
        this.client = client;
        this.marker = marker;
        this.snapshots = client.connect();
        this.notifications = client.connectPubSub();
    }

    /** Starts counting on {@code server}. */
    public static ScriptCount of(RedisServer server) {
        // K: keyspace channels; h: hash commands
        server.execute("CONFIG", "SET", "notify-keyspace-events", "Kh");
        ScriptCount count = new ScriptCount(RedisClient.create(server.uri()), markerOn(server));
        String markerChannel = "__keyspace@0__:" + count.marker;
        count.notifications.addListener(new RedisPubSubAdapter<>() {
            @Override
            public void message(String pattern, String channel, String message) {
                if (message.equals("hset")) {
                    count.recordWrites.incrementAndGet();
                }
            }

            @Override
            public void message(String channel, String message) {
                if (channel.equals(markerChannel)) {
                    count.recordWritesAtMarkers.add(count.recordWrites.get());
                }
            }
        });
        count.notifications.sync().psubscribe("__keyspace@0__:relock:client:*");
        count.notifications.sync().subscribe(markerChannel);
        return count;
    }

    /** A key {@code server} serves: any on one Redis, on a Cluster node one of its slots. */
    private static String markerOn(RedisServer server) {
        for (int i = 0; ; i++) {
            String key = "relock-test:script-count:" + i;
            try {
                server.execute("EXISTS", key);
                return key;
            } catch (RedisCommandExecutionException movedElsewhere) {
                // a Cluster node that does not serve the key's slot
            }
        }
    }

    /**
     * The lock scripts run so far: INFO read in one transaction with a write of the marker key, whose notification
     * comes after those of every record write before it.
     */
    public long scriptsSoFar() {
        // before the write: its notification may come before exec() returns
        int written = recordWritesAtMarkers.size();
        RedisCommands<String, String> redis = snapshots.sync();
        redis.multi();
        redis.info("commandstats");
        redis.hset(marker, "at", Long.toString(System.nanoTime()));
        TransactionResult result = redis.exec();
        await("the notification of " + marker).atMost(HANG).pollDelay(Duration.ZERO)
                .until(() -> recordWritesAtMarkers.size() > written);
        long scripts = 0;
        for (String line : ((String) result.get(0)).split("\r\n")) {
            if (line.startsWith("cmdstat_evalsha:") || line.startsWith("cmdstat_eval:")) {
                scripts += Long.parseLong(line.replaceAll("^cmdstat_[a-z]+:calls=(\\d+),.*", "$1"));
            }
        }
        return scripts - recordWritesAtMarkers.get(written);
    }

    @Override
    public void close() {
        notifications.close();
        snapshots.close();
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
    }
}
