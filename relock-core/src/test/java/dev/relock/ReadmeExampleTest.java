package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The README's "## Usage" snippet, compiled and run against the fixture's server. The code between
 * the markers below is the snippet line for line, except lines ending in {@value #TEST_ONLY}
 * (pointing the client at the fixture instead of the snippet's host); {@link #theSnippetIsTheReadmes()}
 * keeps the two identical.
 */
class ReadmeExampleTest extends OneServerTestBase {

    private static final String BEGIN = "// README usage begin";
    private static final String END = "// README usage end";
    private static final String TEST_ONLY = "// not in README";

    // ---- what the snippet uses but does not define ----------------------------------------

    private record Invoice(String id, boolean isPaid) {
        Invoice paid() {
            return new Invoice(id, true);
        }
    }

    /** A store that, as the snippet's comment says, rejects tokens older than its last. */
    private final class InvoiceStore {
        final Map<String, Invoice> saved = new HashMap<>();
        long lastToken;

        Invoice load(String id) {
            assertThat(admin().exists("billing:{invoice:" + id + "}")).as("the lock's key, with the prefix").isEqualTo(1);
            return new Invoice(id, false);
        }

        void save(Invoice invoice, long fencingToken) {
            if (fencingToken <= lastToken) {
                throw new IllegalStateException("stale fencing token " + fencingToken);
            }
            lastToken = fencingToken;
            saved.put(invoice.id(), invoice);
        }
    }

    private static final class Alerts {
        final List<String> fired = new ArrayList<>();

        void fire(String lockName, String reason) {
            fired.add(lockName + ": " + reason);
        }
    }

    private int nightlyRuns;

    private void runNightlyJob() {
        nightlyRuns++;
        // the fixed 2-minute lease, not the 30 s default
        long leftMillis = admin().pttl("billing:{invoice:42}");
        assertThat(leftMillis).isGreaterThan(TimeUnit.SECONDS.toMillis(30)).isLessThanOrEqualTo(TimeUnit.MINUTES.toMillis(2));
    }

    // ---- the snippet ----------------------------------------------------------------------------

    @Test
    void theSnippetRuns() throws Exception {
        String redisUri = redis.uri();
        Alerts alerts = new Alerts();
        InvoiceStore store = new InvoiceStore();
        String invoiceId = "42";
        nightlyRuns = 0;

        // README usage begin
        RelockClient client = RelockClient.builder()
                .redisUri("redis://app:secret@redis.internal:6379")
                .redisUri(redisUri) // not in README: the fixture's server instead of the host above
                .keyPrefix("billing")                        // keys: billing:{<name>}…
                .defaultLease(Duration.ofSeconds(30))        // renewed every 10 s while held
                .leaseLostListener(lost -> alerts.fire(lost.lockName(), lost.reason()))
                .build();

        RelockLock lock = client.lock("invoice:" + invoiceId);
        try (LockHandle held = lock.tryAcquire(Duration.ofSeconds(5)).orElseThrow()) {
            Invoice invoice = store.load(invoiceId);
            store.save(invoice.paid(), held.fencingToken());  // the store rejects tokens older than its last
        }

        if (lock.tryLock(0, 2, TimeUnit.MINUTES)) {          // no wait, fixed 2-minute lease, not renewed
            try { runNightlyJob(); } finally { lock.unlock(); }
        }
        client.close();                                      // releases what it still holds
        // README usage end

        assertThat(store.saved).containsEntry("42", new Invoice("42", true));
        assertThat(store.lastToken).isPositive();
        assertThat(nightlyRuns).isEqualTo(1);
        assertThat(alerts.fired).isEmpty();
        assertThat(admin().exists("billing:{invoice:42}")).isZero();
        assertThatThrownBy(() -> client.lock("invoice:42")).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void theSnippetIsTheReadmes() throws IOException {
        Path module = Path.of("").toAbsolutePath();
        List<String> readme = usageSnippet(module.resolve("../README.md"));
        List<String> test = markedRegion(module.resolve("src/test/java/dev/relock/ReadmeExampleTest.java"));
        assertThat(readme).as("README usage snippet").isNotEmpty();
        assertThat(String.join("\n", test))
                .as("the code between the markers in ReadmeExampleTest, without the lines ending in '%s'", TEST_ONLY)
                .isEqualTo(String.join("\n", readme));
    }

    /** The java block after the "## Usage" heading, without its common indentation. */
    private static List<String> usageSnippet(Path readme) throws IOException {
        List<String> lines = Files.readAllLines(readme, StandardCharsets.UTF_8);
        int heading = lines.indexOf("## Usage");
        assertThat(heading).as("'## Usage' in %s", readme).isNotNegative();
        int open = heading + 1;
        while (open < lines.size() && !lines.get(open).trim().equals("```java")) {
            assertThat(lines.get(open)).as("a heading before the usage code block").doesNotStartWith("#");
            open++;
        }
        int close = open + 1;
        while (close < lines.size() && !lines.get(close).trim().equals("```")) {
            close++;
        }
        assertThat(close).as("end of the usage code block").isLessThan(lines.size());
        return unindented(lines.subList(open + 1, close));
    }

    /** The lines between the markers, without test-only lines and common indentation. */
    private static List<String> markedRegion(Path source) throws IOException {
        List<String> lines = Files.readAllLines(source, StandardCharsets.UTF_8);
        List<String> trimmed = lines.stream().map(String::trim).toList();
        int begin = trimmed.indexOf(BEGIN);
        int end = trimmed.indexOf(END);
        assertThat(begin).as("marker '%s' in %s", BEGIN, source).isNotNegative();
        assertThat(end).as("marker '%s' after the begin marker", END).isGreaterThan(begin);
        List<String> region = new ArrayList<>();
        for (String line : lines.subList(begin + 1, end)) {
            if (!line.contains(TEST_ONLY)) {
                region.add(line);
            }
        }
        return unindented(region);
    }

    private static List<String> unindented(List<String> lines) {
        int indent = lines.stream().filter(line -> !line.isBlank())
                .mapToInt(line -> line.length() - line.stripLeading().length()).min().orElse(0);
        return lines.stream().map(line -> line.isBlank() ? "" : line.substring(indent).stripTrailing()).toList();
    }
}
