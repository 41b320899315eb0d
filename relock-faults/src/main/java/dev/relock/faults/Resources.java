package dev.relock.faults;

import dev.relock.testredis.RedisServer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.h2.tools.Server;

/**
 * What the workers' sections protect, where no fault reaches: a Redis with the unfenced counter, the registers
 * fenced by {@code RedisFence}, the condition workload's queue and the latch workload's round, and an H2 database (in
 * this JVM, served over TCP) whose {@link #TABLE} row is fenced by {@code JdbcFence}. One per scenario run, used by
 * the campaign's thread, and by the {@link LatchCoordinator}'s lanes for {@link #setRound}.
 */
final class Resources implements AutoCloseable {

    /** The fenced table: one row, {@link #ROW}, whose last writer and token the workers' fenced writes set. */
    static final String TABLE = "register";
    static final String ROW = "campaign";

    static {
        // H2 listens on every interface unless told otherwise; the campaign's servers stay on loopback
        System.setProperty("h2.bindAddress", "127.0.0.1");
    }

    private final RedisServer redis;
    private final Server h2;
    private final String jdbcUrl;
    /** Kept open so the in-memory database lives as long as the run. */
    private final Connection keeper;

    private Resources(RedisServer redis, Server h2, String jdbcUrl, Connection keeper) {
        this.redis = redis;
        this.h2 = h2;
        this.jdbcUrl = jdbcUrl;
        this.keeper = keeper;
    }

    /** Starts both, the database named {@code name} with its table and row. */
    static Resources start(String name) throws SQLException {
        RedisServer redis = RedisServer.start();
        Server h2 = null;
        try {
            // loopback only; the in-memory database is created by this JVM's first connection
            h2 = Server.createTcpServer("-tcpPort", "0", "-ifNotExists").start();
            String url = "jdbc:h2:tcp://127.0.0.1:" + h2.getPort() + "/mem:" + name.replaceAll("[^A-Za-z0-9]", "_");
            Connection keeper = DriverManager.getConnection(url);
            try (Statement ddl = keeper.createStatement()) {
                ddl.execute("CREATE TABLE " + TABLE
                        + " (id VARCHAR(40) PRIMARY KEY, writer VARCHAR(40), fencing_token BIGINT NOT NULL DEFAULT 0)");
                ddl.execute("INSERT INTO " + TABLE + " (id) VALUES ('" + ROW + "')");
            }
            return new Resources(redis, h2, url, keeper);
        } catch (SQLException | RuntimeException e) {
            if (h2 != null) {
                h2.stop();
            }
            redis.close();
            throw e;
        }
    }

    String redisUri() {
        return redis.uri();
    }

    String jdbcUrl() {
        return jdbcUrl;
    }

    /** The unfenced counter's value now, 0 when it was never written. */
    long counter() {
        String value = redis.execute("GET", FaultWorker.COUNTER);
        return value == null ? 0 : Long.parseLong(value);
    }

    /** Names the latch workload's current round in lane {@code lane} ({@link LatchRounds#roundKey}). */
    void setRound(int lane, long round) {
        redis.execute("SET", LatchRounds.roundKey(lane), Long.toString(round));
    }

    /** Takes every item left in the condition workload's queue ({@link QueueSections#QUEUE}), head first. */
    List<String> drainQueue() {
        List<String> items = new ArrayList<>();
        for (String item = redis.execute("LPOP", QueueSections.QUEUE); item != null;
                item = redis.execute("LPOP", QueueSections.QUEUE)) {
            items.add(item);
        }
        return items;
    }

    @Override
    public void close() throws SQLException {
        try {
            keeper.close();
        } finally {
            h2.stop();
            redis.close();
        }
    }
}
