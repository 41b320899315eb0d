package dev.relock;

import dev.relock.testredis.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * What happens to one key of a test's own Redis, as keyspace notifications tell it ({@code hset}, {@code expire},
 * {@code hdel}, {@code del}, {@code expired}, ...), each stamped with {@link System#nanoTime()} when it arrived.
 * Switches notifications on for the whole server: only for a server the test started.
 */
final class KeyEvents implements AutoCloseable {

    /** One event: its name and when this JVM received it. */
    record Event(String name, long at) {}

    private final RedisClient client;
    private final StatefulRedisPubSubConnection<String, String> connection;
    private final List<Event> events = new CopyOnWriteArrayList<>();

    private KeyEvents(RedisClient client, StatefulRedisPubSubConnection<String, String> connection) {
        this.client = client;
        this.connection = connection;
    }

    /** Starts listening to {@code key} on {@code server} (database 0). */
    static KeyEvents of(RedisServer server, String key) {
        // K: keyspace channel; g: del, expire; h: hash commands; x: expiries
        server.execute("CONFIG", "SET", "notify-keyspace-events", "Kghx");
        RedisClient client = RedisClient.create(server.uri());
        StatefulRedisPubSubConnection<String, String> connection = client.connectPubSub();
        KeyEvents keyEvents = new KeyEvents(client, connection);
        connection.addListener(new RedisPubSubAdapter<>() {
            @Override
            public void message(String channel, String message) {
                keyEvents.events.add(new Event(message, System.nanoTime()));
            }
        });
        connection.sync().subscribe("__keyspace@0__:" + key);
        return keyEvents;
    }

    int size() {
        return events.size();
    }

    /** The events from the {@code from}-th on (0-based), in the order they arrived. */
    List<Event> since(int from) {
        return List.copyOf(events.subList(from, events.size()));
    }

    /** Whether an event named {@code name} arrived at or after the {@code from}-th. */
    boolean seen(int from, String name) {
        return since(from).stream().anyMatch(event -> event.name().equals(name));
    }

    /** The first event named {@code name} at or after the {@code from}-th, or null. */
    Event first(int from, String name) {
        return since(from).stream().filter(event -> event.name().equals(name)).findFirst().orElse(null);
    }

    @Override
    public void close() {
        connection.close();
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
    }
}
