package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.File;
import java.io.IOException;
import java.io.StringWriter;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import javax.tools.JavaCompiler;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's "## Usage" snippet, compiled and run against the fixture's server. It is a whole file,
 * {@link QuickStart}: the code between its markers is the snippet line for line, except lines ending in
 * {@value DocSnippets#NOT_IN_THE_DOCS} (its package, the fixture's server instead of the snippet's host, and calls
 * of the probes below); {@link DocSnippetsTest} keeps the two identical (and README.zh-CN.md's copy with them), and
 * {@link #theSnippetCompilesAsPasted(Path)} compiles the README's block as it stands, in no package, as a user's
 * first file.
 */
@Tag("redis")
class ReadmeExampleTest extends OneServerTestBase {

    // ---- probes the snippet calls on lines that are not in the README --------------------------

    /** The test that runs the snippet now; tests of one class run one after another. */
    private static volatile ReadmeExampleTest running;

    private final List<Long> tokens = new CopyOnWriteArrayList<>();
    private final List<LeaseLost> lost = new CopyOnWriteArrayList<>();
    private final List<RelockClient> snippetClients = new CopyOnWriteArrayList<>();
    private int nightlyRuns;

    /** Inside a hold: the lock's key has the prefix, and each hold's token is greater than the last. */
    static void holding(RelockClient client, long fencingToken) {
        ReadmeExampleTest test = running;
        assertThat(test.admin().exists("billing:{invoice:42}")).as("the lock's key, with the prefix").isEqualTo(1);
        if (!test.tokens.isEmpty()) {
            assertThat(fencingToken).as("a later hold's fencing token").isGreaterThan(test.tokens.get(test.tokens.size() - 1));
        }
        test.tokens.add(fencingToken);
        test.snippetClients.add(client);
    }

    /** Inside tryLock(0, 2, MINUTES): the fixed 2-minute lease, not the 30 s default. */
    static void holdingForTwoMinutes() {
        ReadmeExampleTest test = running;
        test.nightlyRuns++;
        long leftMillis = test.admin().pttl("billing:{invoice:42}");
        assertThat(leftMillis).isGreaterThan(TimeUnit.SECONDS.toMillis(30)).isLessThanOrEqualTo(TimeUnit.MINUTES.toMillis(2));
    }

    static void leaseLost(LeaseLost lease) {
        running.lost.add(lease);
    }

    // ---- the snippet ----------------------------------------------------------------------------

    @Test
    void theSnippetRuns() throws Exception {
        running = this;
        try {
            QuickStart.main(new String[] {redis.uri()});
        } finally {
            running = null;
        }

        assertThat(tokens).as("fencing tokens of the two holds").hasSize(2).allSatisfy(token -> assertThat(token).isPositive());
        assertThat(nightlyRuns).isEqualTo(1);
        assertThat(lost).isEmpty();
        assertThat(admin().exists("billing:{invoice:42}")).isZero();
        RelockClient client = snippetClients.get(0);
        assertThat(snippetClients).containsOnly(client);
        assertThatThrownBy(() -> client.lock("invoice:42")).as("a lock from the closed client")
                .isInstanceOf(IllegalStateException.class);
    }

    /** The README's block, as pasted into QuickStart.java with nothing else: it compiles against relock-core. */
    @Test
    void theSnippetCompilesAsPasted(@TempDir Path dir) throws IOException {
        List<String> readme = DocSnippets.block("README.md#usage", "java").lines();
        Path source = dir.resolve("src/QuickStart.java");
        Files.createDirectories(source.getParent());
        Files.write(source, readme, StandardCharsets.UTF_8);
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        assertThat(javac).as("the JDK's compiler").isNotNull();
        String classPath = System.getProperty("java.class.path") + File.pathSeparator
                + Path.of(URI.create(RelockClient.class.getProtectionDomain().getCodeSource().getLocation().toString()));
        StringWriter messages = new StringWriter();
        Boolean compiled;
        try (StandardJavaFileManager files = javac.getStandardFileManager(null, null, StandardCharsets.UTF_8)) {
            compiled = javac.getTask(messages, files, null,
                    List.of("--release", "17", "-classpath", classPath, "-d", dir.resolve("classes").toString(), "-proc:none"),
                    null, files.getJavaFileObjects(source)).call();
        }
        assertThat(compiled).as("javac on the README's usage block:%n%s", messages).isTrue();
        assertThat(dir.resolve("classes/QuickStart.class")).exists();
    }
}
