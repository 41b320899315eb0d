package dev.relock.examples;

import dev.relock.LeaseLostException;
import dev.relock.LockHandle;
import dev.relock.RelockClient;
import dev.relock.fencing.JdbcFence;
import dev.relock.fencing.RedisFence;
import dev.relock.fencing.StaleFencingTokenException;
import dev.relock.testredis.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.Consumer;

/**
 * A holder that stalls past its lease writes after the next holder did, and the account refuses
 * the stale write because it carries an older fencing token. Shown twice: for a balance kept in
 * Redis ({@link RedisFence}) and in a SQL table ({@link JdbcFence}, on an in-memory H2 database).
 *
 * <p>Uses the Redis at {@code $RELOCK_REDIS} if set, else starts a private redis-server.
 * Run: {@code mvn -B -q install -DskipTests && mvn -B -q -pl relock-examples exec:java
 * -Dexec.mainClass=dev.relock.examples.FencedAccountUpdate}
 */
public final class FencedAccountUpdate {

    /** Where a balance is kept; every write carries the writer's fencing token. */
    interface Account extends AutoCloseable {
        long balance() throws Exception;

        /** @throws StaleFencingTokenException when a newer token has written the balance */
        void write(long balance, long fencingToken) throws Exception;
    }

    /** What one run of the story ended with, per account. */
    record Outcome(String account, long finalBalance, boolean staleWriteRefused, boolean leaseLossReported) {}

    static final long OPENING_BALANCE = 100;
    static final long FIRST_DEPOSIT = 10;
    static final long SECOND_DEPOSIT = 50;
    private static final Duration FIRST_LEASE = Duration.ofMillis(500);

    public static void main(String[] args) throws Exception {
        String given = System.getenv("RELOCK_REDIS");
        try (RedisServer server = given == null ? RedisServer.start() : null) {
            String uri = given != null ? given : server.uri();
            System.out.println("Redis: " + (given != null ? uri : uri + " (private redis-server, stopped at the end)"));
            for (Outcome outcome : run(uri, System.out::println)) {
                System.out.printf("%s: balance %d (expected %d), stale write %s%n", outcome.account(),
                        outcome.finalBalance(), OPENING_BALANCE + SECOND_DEPOSIT,
                        outcome.staleWriteRefused() ? "refused" : "ACCEPTED: an update was lost");
            }
        }
    }

    /** Tells the story once for a Redis account and once for a SQL account. */
    static List<Outcome> run(String redisUri, Consumer<String> log) throws Exception {
        RedisClient redis = RedisClient.create(redisUri);
        List<Outcome> outcomes = new ArrayList<>();
        try (RelockClient first = RelockClient.builder().redisUri(redisUri).build();
                RelockClient second = RelockClient.builder().redisUri(redisUri).build();
                StatefulRedisConnection<String, String> connection = redis.connect()) {
            try (Account account = new RedisAccount(connection, "fenced-demo:{account:42}")) {
                outcomes.add(story("redis", account, first, second, log));
            }
            try (Account account = new SqlAccount(DriverManager.getConnection("jdbc:h2:mem:" + UUID.randomUUID()))) {
                outcomes.add(story("sql", account, first, second, log));
            }
        } finally {
            redis.shutdown();
        }
        return outcomes;
    }

    /**
     * The first client reads the balance under a 500 ms lease, then stalls (a GC pause, a stopped
     * VM: here simply the time the second client waits) until the lease ran out. The second client
     * takes the lock, deposits 50 and leaves. The first wakes up and writes what it computed before
     * the pause: without fencing that would erase the second deposit.
     */
    private static Outcome story(String name, Account account, RelockClient first, RelockClient second,
            Consumer<String> log) throws Exception {
        String lockName = "fenced-demo:account:" + name;
        account.write(OPENING_BALANCE, 0);

        LockHandle stalled = first.lock(lockName).tryAcquire(Duration.ZERO, FIRST_LEASE).orElseThrow();
        long seenBeforePause = account.balance();
        log.accept(name + ": first holder (token " + stalled.fencingToken() + ") read " + seenBeforePause
                + ", then stalls past its " + FIRST_LEASE.toMillis() + " ms lease");

        try (LockHandle next = second.lock(lockName).tryAcquire(Duration.ofSeconds(10)).orElseThrow()) {
            long balance = account.balance();
            account.write(balance + SECOND_DEPOSIT, next.fencingToken());
            log.accept(name + ": second holder (token " + next.fencingToken() + ") deposited " + SECOND_DEPOSIT
                    + ": " + (balance + SECOND_DEPOSIT));
        }

        boolean refused = false;
        try {
            account.write(seenBeforePause + FIRST_DEPOSIT, stalled.fencingToken());
            log.accept(name + ": first holder wrote " + (seenBeforePause + FIRST_DEPOSIT) + " over it");
        } catch (StaleFencingTokenException e) {
            refused = true;
            log.accept(name + ": first holder's write refused: " + e.getMessage());
        }
        boolean lossReported = false;
        try {
            stalled.close();
        } catch (LeaseLostException e) {
            lossReported = true;
        }
        return new Outcome(name, account.balance(), refused, lossReported);
    }

    /** A balance in a Redis string, written through a {@link RedisFence}; its keys are deleted before and after. */
    private static final class RedisAccount implements Account {
        private final StatefulRedisConnection<String, String> connection;
        private final RedisFence fence;
        private final String key;

        RedisAccount(StatefulRedisConnection<String, String> connection, String key) {
            this.connection = connection;
            this.fence = RedisFence.on(connection);
            this.key = key;
            close();
        }

        @Override
        public long balance() {
            return Long.parseLong(connection.sync().get(key));
        }

        @Override
        public void write(long balance, long fencingToken) {
            fence.set(key, Long.toString(balance), fencingToken);
        }

        @Override
        public void close() {
            connection.sync().del(key, RedisFence.tokenKey(key));
        }
    }

    /** A balance in a row of an in-memory SQL table, written through a {@link JdbcFence}. */
    private static final class SqlAccount implements Account {
        private static final JdbcFence ACCOUNTS = JdbcFence.forTable("account", "id", "fencing_token");
        private static final long ID = 42;
        private final Connection connection;

        SqlAccount(Connection connection) throws SQLException {
            this.connection = connection;
            try (Statement ddl = connection.createStatement()) {
                ddl.execute("CREATE TABLE account (id BIGINT PRIMARY KEY, balance BIGINT NOT NULL,"
                        + " fencing_token BIGINT NOT NULL DEFAULT 0)");
                ddl.execute("INSERT INTO account (id, balance) VALUES (" + ID + ", 0)");
            }
        }

        @Override
        public long balance() throws SQLException {
            try (PreparedStatement query = connection.prepareStatement("SELECT balance FROM account WHERE id = ?")) {
                query.setLong(1, ID);
                try (ResultSet row = query.executeQuery()) {
                    row.next();
                    return row.getLong(1);
                }
            }
        }

        @Override
        public void write(long balance, long fencingToken) throws SQLException {
            ACCOUNTS.update(connection, ID, fencingToken, "balance = ?", balance);
        }

        @Override
        public void close() throws SQLException {
            connection.close();
        }
    }

    private FencedAccountUpdate() {}
}
