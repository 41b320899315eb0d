package dev.relock.contract;

import dev.relock.testredis.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The {@code hset} writes to one key on each of a deployment's key holders, as their keyspace notifications tell:
 * switches notifications on for those servers (which the deployment started for its tests) and off again at close.
 */
final class KeyWrites implements AutoCloseable {

    // the channel whose message, sent by the server itself after everything before it, settles the count
    private static final String MARKER = "relock-test:key-writes";

    private final List<RedisServer> servers;
    private final List<RedisClient> clients = new ArrayList<>();
    // per server, in the order of servers: hset events of the key, and markers it has sent back
    private final List<AtomicLong> hsets = new ArrayList<>();
    private final List<AtomicInteger> markers = new ArrayList<>();

    private KeyWrites(List<RedisServer> servers) {
        this.servers = List.copyOf(servers);
    }

    /** Starts counting the writes to {@code key} on every server of {@code servers}. */
    static KeyWrites of(List<RedisServer> servers, String key) {
        KeyWrites writes = new KeyWrites(servers);
        for (RedisServer server : writes.servers) {
            // K: keyspace channel; h: hash commands
            server.execute("CONFIG", "SET", "notify-keyspace-events", "Kh");
            AtomicLong hsets = new AtomicLong();
            AtomicInteger markers = new AtomicInteger();
            String marker = Integer.toString(server.port());
            RedisClient client = RedisClient.create(server.uri());
            writes.clients.add(client);
            writes.hsets.add(hsets);
            writes.markers.add(markers);
            StatefulRedisPubSubConnection<String, String> connection = client.connectPubSub();
            connection.addListener(new RedisPubSubAdapter<>() {
                @Override
                public void message(String channel, String message) {
                    if (channel.equals(MARKER)) {
                        // on Cluster every node forwards PUBLISH to the others: only this server's own counts
                        if (message.equals(marker)) {
                            markers.incrementAndGet();
                        }
                    } else if (message.equals("hset")) {
                        hsets.incrementAndGet();
                    }
                }
            });
            connection.sync().subscribe("__keyspace@0__:" + key, MARKER);
        }
        return writes;
    }

    /**
     * The writes each server has made so far, in the order of the servers: it waits for each server's answer to a
     * PUBLISH sent now, which that server sends after the notifications of every write it made before.
     */
    List<Long> perServer() {
        for (int i = 0; i < servers.size(); i++) {
            int seen = markers.get(i).get();
            RedisServer server = servers.get(i);
            server.execute("PUBLISH", MARKER, Integer.toString(server.port()));
            AtomicInteger answered = markers.get(i);
            Polling.soon("the notifications of " + server).until(() -> answered.get() > seen);
        }
        return hsets.stream().map(AtomicLong::get).toList();
    }

    @Override
    public void close() {
        clients.forEach(client -> client.shutdown(Duration.ZERO, Duration.ofSeconds(2)));
        servers.forEach(server -> server.execute("CONFIG", "SET", "notify-keyspace-events", ""));
    }
}
