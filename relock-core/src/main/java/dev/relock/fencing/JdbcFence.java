package dev.relock.fencing;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Fenced updates of rows in a SQL table that keeps, per row, the last fencing token that wrote it
 * (a {@code BIGINT NOT NULL DEFAULT 0} column). An update carries the writer's token and changes
 * the row only if the token is not older than the row's:
 *
 * <pre>{@code
 * UPDATE account SET balance = ?, fencing_token = ? WHERE id = ? AND fencing_token <= ?
 * }</pre>
 *
 * The database decides, atomically, in the same statement as the write. This class builds that
 * statement from the table's names and your {@code SET} assignments, binds the token, and tells a
 * refused write from a missing row:
 *
 * <pre>{@code
 * JdbcFence accounts = JdbcFence.forTable("account", "id", "fencing_token");
 * try (LockHandle held = client.lock("account:42").acquire()) {
 *     accounts.update(connection, 42, held.fencingToken(), "balance = balance + ?", 10);
 * }                                   // StaleFencingTokenException if a newer holder wrote the row
 * }</pre>
 *
 * <p>An equal token writes (the same hold writing again; every fresh acquisition of a relock lock
 * gets a greater token). Fence a table's rows with the tokens of one lock per row. Statements run on
 * the connection as it is: in its transaction if one is open, committed by you. For SQL this class
 * does not cover (joins, upserts, several rows), write the same condition yourself: set the token
 * column to the token, add {@code AND token_column <= ?} to the {@code WHERE}, and treat 0 rows as
 * refused or missing. Immutable and thread-safe.
 */
public final class JdbcFence {

    /** A plain or double-quoted SQL identifier, optionally qualified by a schema. */
    private static final Pattern IDENTIFIER =
            Pattern.compile("(?:[A-Za-z_][A-Za-z0-9_$]*|\"[^\"]+\")(?:\\.(?:[A-Za-z_][A-Za-z0-9_$]*|\"[^\"]+\"))?");

    private final String table;
    private final String idColumn;
    private final String tokenColumn;
    private final String selectToken;

    private JdbcFence(String table, String idColumn, String tokenColumn) {
        this.table = table;
        this.idColumn = idColumn;
        this.tokenColumn = tokenColumn;
        this.selectToken = "SELECT " + tokenColumn + " FROM " + table + " WHERE " + idColumn + " = ?";
    }

    /**
     * A fence for the rows of {@code table}, found by {@code idColumn}, whose last writer's token is
     * in {@code tokenColumn}.
     *
     * @throws IllegalArgumentException when a name is not a plain or double-quoted SQL identifier
     *     (optionally {@code schema.name}); names are written into the SQL, so nothing else is taken
     */
    public static JdbcFence forTable(String table, String idColumn, String tokenColumn) {
        return new JdbcFence(identifier("table", table), identifier("idColumn", idColumn),
                identifier("tokenColumn", tokenColumn));
    }

    /**
     * Runs {@code UPDATE table SET assignments, tokenColumn = fencingToken WHERE idColumn = id AND
     * tokenColumn <= fencingToken}, binding {@code values} to the {@code ?} in {@code assignments}
     * in order.
     *
     * @param connection where to run it, as it is (autocommit or inside your transaction)
     * @param id the row's id, bound with {@code setObject}
     * @param fencingToken the writer's token, e.g. {@link dev.relock.LockHandle#fencingToken()}
     * @param assignments the {@code SET} list without the token column, e.g. {@code "balance = ?"}
     * @param values bound with {@code setObject} to the placeholders of {@code assignments}, in order
     * @return the number of rows updated: 1 for a unique id, 0 when no row has that id
     * @throws StaleFencingTokenException when the row exists and a newer token has written it
     *     (nothing changed)
     * @throws IllegalArgumentException for a negative token or blank assignments
     * @throws IllegalStateException when the row's token column is NULL (declare it NOT NULL DEFAULT 0)
     * @throws SQLException from the driver, also when {@code values} do not match the placeholders
     */
    public int update(Connection connection, Object id, long fencingToken, String assignments, Object... values)
            throws SQLException {
        Objects.requireNonNull(connection, "connection");
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(assignments, "assignments");
        Objects.requireNonNull(values, "values");
        if (assignments.isBlank()) {
            throw new IllegalArgumentException("assignments are blank; give the SET list, e.g. \"balance = ?\"");
        }
        if (fencingToken < 0) {
            throw new IllegalArgumentException("fencing token " + fencingToken + " is negative");
        }
        String sql = "UPDATE " + table + " SET " + assignments + ", " + tokenColumn + " = ? WHERE "
                + idColumn + " = ? AND " + tokenColumn + " <= ?";
        int updated;
        try (PreparedStatement update = connection.prepareStatement(sql)) {
            int index = 1;
            for (Object value : values) {
                update.setObject(index++, value);
            }
            update.setLong(index++, fencingToken);
            update.setObject(index++, id);
            update.setLong(index, fencingToken);
            updated = update.executeUpdate();
        }
        if (updated == 0) {
            refuseIfNewer(connection, id, fencingToken);
        }
        return updated;
    }

    /** After an update that changed nothing: throws when the row is there with a newer token. */
    private void refuseIfNewer(Connection connection, Object id, long fencingToken) throws SQLException {
        try (PreparedStatement select = connection.prepareStatement(selectToken)) {
            select.setObject(1, id);
            try (ResultSet row = select.executeQuery()) {
                if (!row.next()) {
                    return;
                }
                long last = row.getLong(1);
                String resource = table + " " + idColumn + "=" + id;
                if (row.wasNull()) {
                    throw new IllegalStateException(tokenColumn + " of " + resource
                            + " is NULL, so no token can write it; declare the column NOT NULL DEFAULT 0");
                }
                if (last > fencingToken) {
                    throw new StaleFencingTokenException(resource, fencingToken, last);
                }
            }
        }
    }

    private static String identifier(String what, String name) {
        Objects.requireNonNull(name, what);
        if (!IDENTIFIER.matcher(name).matches()) {
            throw new IllegalArgumentException(what + " '" + name
                    + "' is not an SQL identifier (letters, digits, _ and $, or \"quoted\", optionally schema.name)");
        }
        return name;
    }

    @Override
    public String toString() {
        return "JdbcFence[" + table + "." + idColumn + ", token " + tokenColumn + "]";
    }
}
