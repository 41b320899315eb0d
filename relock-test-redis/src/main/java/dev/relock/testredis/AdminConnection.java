package dev.relock.testredis;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.CommandOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.ProtocolKeyword;
import io.lettuce.core.protocol.ProtocolVersion;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.List;
import java.util.stream.Collectors;

/**
 * A Lettuce connection the fixture uses to send its own commands (readiness checks, FLUSHALL, anything passed to
 * {@code execute}) to one redis-server.
 *
 * <p>All connections share one {@link RedisClient} (and so one set of Netty threads, which are daemon threads),
 * created on first use and never shut down. Connections speak RESP2, never reconnect, and reject commands once the
 * server is gone, so a dead or restarted server shows up as an exception rather than a hang. A connection is
 * thread-safe (Lettuce pipelines concurrent commands on it).
 */
final class AdminConnection implements AutoCloseable {

    private static RedisClient client; // guarded by AdminConnection.class

    private final StatefulRedisConnection<String, String> connection;

    private AdminConnection(StatefulRedisConnection<String, String> connection) {
        this.connection = connection;
    }

    /**
     * Connects to {@code host:port}, authenticating with {@code password} when it is not null.
     *
     * @throws io.lettuce.core.RedisException if the server cannot be reached or refuses the password
     */
    static AdminConnection open(String host, int port, String password) {
        RedisURI.Builder uri = RedisURI.builder()
                .withHost(host)
                .withPort(port)
                .withTimeout(TestTimeouts.scaled(Duration.ofSeconds(5)));
        if (password != null) {
            uri.withPassword(password.toCharArray());
        }
        return new AdminConnection(client().connect(StringCodec.UTF8, uri.build()));
    }

    private static synchronized RedisClient client() {
        if (client == null) {
            RedisClient created = RedisClient.create();
            created.setOptions(ClientOptions.builder()
                    .protocolVersion(ProtocolVersion.RESP2)
                    .autoReconnect(false)
                    .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                    .socketOptions(SocketOptions.builder()
                            .connectTimeout(TestTimeouts.scaled(Duration.ofSeconds(2)))
                            .build())
                    .build());
            client = created;
        }
        return client;
    }

    /**
     * Sends one command, e.g. {@code execute("CONFIG", "SET", "maxmemory", "10mb")}, and waits for its reply.
     *
     * @return the reply as text: a status or bulk string as is, an integer in decimal, a nil reply as null, an
     *     array as {@code [a, b, [c]]}
     * @throws io.lettuce.core.RedisCommandExecutionException if the server answers with an error
     * @throws io.lettuce.core.RedisCommandTimeoutException if no reply arrives within the (scaled) 5 s timeout
     */
    String execute(String... command) {
        return render(reply(command));
    }

    /**
     * Sends one command and returns its reply unrendered: strings, Long, Double, Boolean, null, and arrays as
     * lists of those (nested).
     *
     * @throws io.lettuce.core.RedisCommandExecutionException if the server answers with an error
     * @throws io.lettuce.core.RedisCommandTimeoutException if no reply arrives within the (scaled) 5 s timeout
     */
    Object reply(String... command) {
        if (command.length == 0) {
            throw new IllegalArgumentException("a command needs at least its name");
        }
        CommandArgs<String, String> args = new CommandArgs<>(StringCodec.UTF8);
        for (int i = 1; i < command.length; i++) {
            args.add(command[i]);
        }
        return connection.sync().dispatch(new CommandName(command[0]), new Reply(), args);
    }

    private static String render(Object reply) {
        if (reply == null) {
            return null;
        }
        if (reply instanceof List<?> list) {
            return list.stream().map(AdminConnection::render).map(String::valueOf)
                    .collect(Collectors.joining(", ", "[", "]"));
        }
        return reply.toString();
    }

    /** False once the connection is closed, by us or by the server (CLIENT KILL, a sentinel reconfiguring it). */
    boolean isOpen() {
        return connection.isOpen();
    }

    @Override
    public void close() {
        connection.close();
    }

    /**
     * Collects any reply: strings and numbers as Java values, nil as null, arrays (nested to any depth) as lists.
     * Lettuce announces an array with {@link #multi(int)} and then delivers its elements one by one; an array is
     * complete when it holds as many elements as announced.
     */
    private static final class Reply extends CommandOutput<String, String, Object> {
        private final Deque<List<Object>> openArrays = new ArrayDeque<>();
        private final Deque<Integer> announcedSizes = new ArrayDeque<>();

        Reply() {
            super(StringCodec.UTF8, null);
        }

        @Override
        public void set(ByteBuffer bytes) {
            add(bytes == null ? null : codec.decodeValue(bytes));
        }

        @Override
        public void set(long integer) {
            add(integer);
        }

        @Override
        public void set(double number) {
            add(number);
        }

        @Override
        public void set(boolean value) {
            add(value);
        }

        @Override
        public void multi(int count) {
            if (count < 0) {
                add(null); // nil array
            } else if (count == 0) {
                add(new ArrayList<>());
            } else {
                openArrays.push(new ArrayList<>(count));
                announcedSizes.push(count);
            }
        }

        private void add(Object value) {
            Object element = value;
            while (!openArrays.isEmpty()) {
                List<Object> array = openArrays.peek();
                array.add(element);
                if (array.size() < announcedSizes.peek()) {
                    return;
                }
                openArrays.pop();
                announcedSizes.pop();
                element = array; // a completed array is an element of the enclosing one, or the reply
            }
            output = element;
        }
    }

    /** Any command name, sent as given (Redis ignores its case). */
    private static final class CommandName implements ProtocolKeyword {
        private final String name;
        private final byte[] bytes;

        CommandName(String name) {
            this.name = name;
            this.bytes = name.getBytes(StandardCharsets.UTF_8);
        }

        @Override
        public byte[] getBytes() {
            return Arrays.copyOf(bytes, bytes.length);
        }

        @Override
        public String toString() {
            return name;
        }
    }
}
