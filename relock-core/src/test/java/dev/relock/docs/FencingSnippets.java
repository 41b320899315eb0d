package dev.relock.docs;

import dev.relock.LockHandle;
import dev.relock.RelockClient;
import dev.relock.fencing.RedisFence;
import io.lettuce.core.api.StatefulRedisConnection;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;

/** The Java blocks of docs/fencing.md, compiled: each region between markers is its block line for line. */
final class FencingSnippets {

    private FencingSnippets() {
    }

    static void fencingTokens(RelockClient client, Connection connection, long id, long amount) throws SQLException {
        // snippet docs/fencing.md#fencing-tokens
        try (LockHandle held = client.lock("account:" + id).acquire();
             PreparedStatement update = connection.prepareStatement(
                     "UPDATE account SET balance = balance + ?, fencing_token = ? WHERE id = ? AND fencing_token <= ?")) {
            update.setLong(1, amount);
            update.setLong(2, held.fencingToken());
            update.setLong(3, id);
            update.setLong(4, held.fencingToken());
            if (update.executeUpdate() == 0) {
                throw new IllegalStateException("account " + id + " is missing, or a newer holder wrote it");
            }
        }
        // snippet end
    }

    static void fencingAtTheResource(RelockClient client, StatefulRedisConnection<String, String> connection) {
        // snippet docs/fencing.md#fencing-at-the-resource
        RedisFence fence = RedisFence.on(connection);          // your own Lettuce connection
        try (LockHandle held = client.lock("account:42").acquire()) {
            long balance = Long.parseLong(connection.sync().get("account:42"));
            fence.set("account:42", Long.toString(balance + 10), held.fencingToken());
        }   // StaleFencingTokenException (nothing written) if a newer holder wrote first; trySet returns false
        // snippet end
    }
}
