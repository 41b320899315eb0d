package dev.relock.examples;

import static org.assertj.core.api.Assertions.assertThat;

import dev.relock.testredis.RedisServer;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The fencing example on a private redis-server: both accounts keep the second deposit and refuse the stale write. */
@Tag("redis")
class FencedAccountUpdateTest {

    @Test
    void theStaleHoldersWriteIsRefusedInRedisAndInSql() throws Exception {
        List<String> log = new CopyOnWriteArrayList<>();
        try (RedisServer server = RedisServer.start()) {
            List<FencedAccountUpdate.Outcome> outcomes = FencedAccountUpdate.run(server.uri(), log::add);

            assertThat(outcomes).extracting(FencedAccountUpdate.Outcome::account).containsExactly("redis", "sql");
            assertThat(outcomes).allSatisfy(outcome -> {
                assertThat(outcome.finalBalance()).as("the second deposit survived")
                        .isEqualTo(FencedAccountUpdate.OPENING_BALANCE + FencedAccountUpdate.SECOND_DEPOSIT);
                assertThat(outcome.staleWriteRefused()).isTrue();
                assertThat(outcome.leaseLossReported()).as("the stalled holder's close() reported the loss").isTrue();
            });
            assertThat(server.execute("DBSIZE")).as("only relock's token counters are left")
                    .isEqualTo(Integer.toString(2));
        }
        assertThat(log).anySatisfy(line -> assertThat(line).startsWith("sql: first holder's write refused"));
    }
}
