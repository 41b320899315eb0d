package dev.relock.reactor;

import static org.assertj.core.api.Assertions.assertThat;

import dev.relock.LockInfo;
import dev.relock.RelockClient;
import dev.relock.testredis.RedisServer;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

/**
 * docs/async.md's Reactor example ({@link ReactorDocExample}'s code between its markers, kept equal to the doc's
 * block by relock-core's {@code DocSnippetsTest}) runs against the fixture's server as the doc says.
 */
@Tag("redis")
class ReactorDocExampleTest {

    @Test
    void theExampleRunsAsTheDocSays() {
        try (RedisServer redis = RedisServer.start(); RelockClient client = RelockClient.create(redis.uri())) {
            client.semaphore("renderers").trySetPermits(2);
            ReactorDocExample.Invoices invoices = new ReactorDocExample.Invoices();
            ReactorDocExample.Publishers example =
                    ReactorDocExample.assemble(client, "42", invoices, new ReactorDocExample.Export());
            assertThat(client.list("*")).as("held before anything was subscribed").noneMatch(LockInfo::isHeld);

            StepVerifier.create(example.paid()).assertNext(invoice -> assertThat(invoice.isPaid()).isTrue()).verifyComplete();
            assertThat(invoices.saved).containsOnlyKeys("42");
            StepVerifier.create(example.rows())
                    .assertNext(row -> assertThat(row.fencingToken()).as("the read hold's token").isPositive())
                    .expectNextCount(1)
                    .verifyComplete();
            StepVerifier.create(example.pdf())
                    .assertNext(pdf -> assertThat(new String(pdf, StandardCharsets.US_ASCII)).isEqualTo("%PDF invoice 42"))
                    .verifyComplete();

            try (var writer = client.readWriteLock("catalog").writeLock().acquire()) {
                StepVerifier.create(example.rows())
                        .as("rows, while a writer holds the catalog past the 2 s wait")
                        .verifyComplete();
            }
            assertThat(client.list("*")).as("held once every publisher ended").noneMatch(LockInfo::isHeld);
        }
    }
}
