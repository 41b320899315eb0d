package dev.relock.reactor;

import static org.assertj.core.api.Assertions.assertThat;

import dev.relock.LockInfo;
import dev.relock.RelockClient;
import dev.relock.testredis.RedisServer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

/**
 * docs/async.md's Reactor example is {@link ReactorDocExample}'s code between its markers, and that code runs
 * against the fixture's server as the doc says.
 */
class ReactorDocExampleTest {

    private static final Path DOC = Path.of("../docs/async.md");
    private static final String HEADING = "## Reactor";
    private static final Path EXAMPLE = Path.of("src/test/java/dev/relock/reactor/ReactorDocExample.java");
    private static final String BEGIN = "// docs/async.md#reactor example begin";
    private static final String END = "// docs/async.md#reactor example end";

    @Test
    void theDocsBlockIsTheCompiledExample() throws IOException {
        List<String> doc = Files.readAllLines(DOC, StandardCharsets.UTF_8);
        int heading = doc.indexOf(HEADING);
        assertThat(heading).as("'%s' in %s", HEADING, DOC).isNotNegative();
        int open = heading + 1;
        while (!doc.get(open).equals("```java")) {
            assertThat(doc.get(open)).as("a line of %s before its first java block", HEADING).doesNotStartWith("#");
            open++;
        }
        int close = doc.subList(open, doc.size()).indexOf("```") + open;
        assertThat(close).as("the end of the block").isGreaterThan(open);

        List<String> example = Files.readAllLines(EXAMPLE, StandardCharsets.UTF_8).stream().map(String::strip).toList();
        int begin = example.indexOf(BEGIN);
        int end = example.indexOf(END);
        assertThat(begin).as("'%s' in %s", BEGIN, EXAMPLE).isNotNegative();
        assertThat(end).as("'%s' after the begin marker", END).isGreaterThan(begin);
        assertThat(String.join("\n", unindented(Files.readAllLines(EXAMPLE, StandardCharsets.UTF_8).subList(begin + 1, end))))
                .as("the code between the markers of %s", EXAMPLE)
                .isEqualTo(String.join("\n", doc.subList(open + 1, close)));
    }

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

    /** The lines without their common indentation and trailing blanks. */
    private static List<String> unindented(List<String> lines) {
        int indent = lines.stream().filter(line -> !line.isBlank())
                .mapToInt(line -> line.length() - line.stripLeading().length()).min().orElse(0);
        return lines.stream().map(line -> line.isBlank() ? "" : line.substring(indent).stripTrailing()).toList();
    }
}
