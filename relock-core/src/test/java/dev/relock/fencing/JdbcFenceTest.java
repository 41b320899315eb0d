package dev.relock.fencing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link JdbcFence} on an in-memory H2 database (one per test, gone when its connection closes):
 * the row changes for a token not older than its own, and an older token is refused with the row
 * left as it was.
 */
class JdbcFenceTest {

    private final JdbcFence accounts = JdbcFence.forTable("account", "id", "fencing_token");
    private Connection connection;

    @BeforeEach
    void createTable() throws SQLException {
        connection = DriverManager.getConnection("jdbc:h2:mem:" + UUID.randomUUID());
        try (Statement ddl = connection.createStatement()) {
            ddl.execute("CREATE TABLE account (id BIGINT PRIMARY KEY, balance BIGINT NOT NULL,"
                    + " fencing_token BIGINT NOT NULL DEFAULT 0)");
            ddl.execute("INSERT INTO account (id, balance) VALUES (42, 100)");
        }
    }

    @AfterEach
    void dropDatabase() throws SQLException {
        connection.close();
    }

    @Test
    void aNewerTokenUpdatesTheRowAndIsRecorded() throws SQLException {
        assertThat(accounts.update(connection, 42, 5, "balance = balance + ?", 10)).isEqualTo(1);
        assertThat(accounts.update(connection, 42, 9, "balance = ?", 150)).isEqualTo(1);
        assertThat(row(42)).isEqualTo("balance=150 token=9");
    }

    @Test
    void anEqualTokenUpdatesAgain() throws SQLException {
        accounts.update(connection, 42, 7, "balance = ?", 110);
        assertThat(accounts.update(connection, 42, 7, "balance = ?", 120)).isEqualTo(1);
        assertThat(row(42)).isEqualTo("balance=120 token=7");
    }

    @Test
    void anOlderTokenIsRefusedAndTheRowIsLeftAsItWas() throws SQLException {
        accounts.update(connection, 42, 7, "balance = ?", 110);
        assertThatThrownBy(() -> accounts.update(connection, 42, 6, "balance = ?", 0))
                .isInstanceOfSatisfying(StaleFencingTokenException.class, stale -> {
                    assertThat(stale.resource()).isEqualTo("account id=42");
                    assertThat(stale.token()).isEqualTo(6);
                    assertThat(stale.lastToken()).isEqualTo(7);
                })
                .hasMessageContaining("fencing token 6 is older than 7");
        assertThat(row(42)).isEqualTo("balance=110 token=7");
    }

    @Test
    void aMissingRowIsZeroRowsNotAStaleToken() throws SQLException {
        assertThat(accounts.update(connection, 43, 7, "balance = ?", 1)).isZero();
    }

    @Test
    void theUpdateJoinsTheCallersTransaction() throws SQLException {
        connection.setAutoCommit(false);
        accounts.update(connection, 42, 8, "balance = ?", 500);
        connection.rollback();
        assertThat(row(42)).as("rolled back with the caller's transaction").isEqualTo("balance=100 token=0");
    }

    @Test
    void aNullTokenColumnIsNamed() throws SQLException {
        try (Statement ddl = connection.createStatement()) {
            ddl.execute("CREATE TABLE loose (id BIGINT PRIMARY KEY, v BIGINT, tok BIGINT)");
            ddl.execute("INSERT INTO loose (id, v) VALUES (1, 0)");
        }
        assertThatThrownBy(() -> JdbcFence.forTable("loose", "id", "tok").update(connection, 1, 3, "v = ?", 1))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("tok of loose id=1 is NULL")
                .hasMessageContaining("NOT NULL DEFAULT 0");
    }

    @Test
    void valuesThatDoNotMatchThePlaceholdersFailInTheDriver() {
        assertThatThrownBy(() -> accounts.update(connection, 42, 1, "balance = ?")).isInstanceOf(SQLException.class);
        assertThatThrownBy(() -> accounts.update(connection, 42, 1, "balance = ?", 1, 2)).isInstanceOf(SQLException.class);
    }

    @Test
    void badArgumentsAreRejectedWithTheirName() {
        assertThatThrownBy(() -> accounts.update(connection, 42, -1, "balance = ?", 1))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("fencing token -1 is negative");
        assertThatThrownBy(() -> accounts.update(connection, 42, 1, " ", 1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("assignments are blank");
        assertThatThrownBy(() -> accounts.update(connection, null, 1, "balance = ?", 1))
                .isInstanceOf(NullPointerException.class).hasMessage("id");
        assertThatThrownBy(() -> accounts.update(null, 42, 1, "balance = ?", 1))
                .isInstanceOf(NullPointerException.class).hasMessage("connection");
        assertThatThrownBy(() -> JdbcFence.forTable(null, "id", "t"))
                .isInstanceOf(NullPointerException.class).hasMessage("table");
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "account; DROP TABLE account", "a b", "1account", "\"unterminated", "a.b.c"})
    void namesThatAreNotIdentifiersAreRejected(String name) {
        assertThatThrownBy(() -> JdbcFence.forTable(name, "id", "fencing_token"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("table '" + name + "' is not an SQL identifier");
    }

    @Test
    void quotedAndQualifiedNamesAreTaken() throws SQLException {
        try (Statement ddl = connection.createStatement()) {
            ddl.execute("CREATE SCHEMA bank");
            ddl.execute("CREATE TABLE bank.\"Ledger\" (id BIGINT PRIMARY KEY, v BIGINT, tok BIGINT NOT NULL DEFAULT 0)");
            ddl.execute("INSERT INTO bank.\"Ledger\" (id, v) VALUES (1, 0)");
        }
        assertThat(JdbcFence.forTable("bank.\"Ledger\"", "id", "tok").update(connection, 1, 3, "v = ?", 9)).isEqualTo(1);
    }

    private String row(long id) throws SQLException {
        try (Statement query = connection.createStatement();
                ResultSet row = query.executeQuery("SELECT balance, fencing_token FROM account WHERE id = " + id)) {
            assertThat(row.next()).as("row %s exists", id).isTrue();
            return "balance=" + row.getLong(1) + " token=" + row.getLong(2);
        }
    }
}
