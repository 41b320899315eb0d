package dev.relock.testredis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("redis")
class RedisBinaryTest {

    @Test
    void theEmbeddedBinaryIsExtractedOnceAndReportsVersion6_2() {
        assertThat(RedisBinary.embeddedRunsHere()).as("the tests need Linux x86-64").isTrue();
        RedisBinary embedded = RedisBinary.embedded();

        assertThat(embedded.source()).isEqualTo("embedded-redis");
        assertThat(Files.isExecutable(embedded.path())).isTrue();
        assertThat(embedded.path()).startsWith(ProcessRegistry.instance().baseDirectory());
        // the jar names the resource 6.2.6, but the binary inside reports itself as a later 6.2 patch release
        assertThat(embedded.version()).startsWith("6.2.");
        assertThat(RedisBinary.embedded()).isSameAs(embedded);
    }

    @Test
    void aServerStartedFromTheEmbeddedBinaryAnswers() {
        try (RedisServer server = RedisServer.builder().binary(RedisBinary.embedded()).start()) {
            assertThat(server.binary().source()).isEqualTo("embedded-redis");
            assertThat(server.execute("PING")).isEqualTo("PONG");
            assertThat(server.execute("INFO", "server")).contains("redis_version:6.2.");
            assertThat(server.execute("DEBUG", "SLEEP", "0")).isEqualTo("OK");
        }
    }

    @Test
    void resolveFindsARunnableBinary() {
        RedisBinary resolved = RedisBinary.resolve();

        assertThat(resolved.source()).isIn("RELOCK_REDIS_SERVER", "PATH", "embedded-redis");
        if ("embedded".equals(System.getProperty(RedisBinary.CHOICE_PROPERTY))) {
            assertThat(resolved.source()).isEqualTo("embedded-redis");
        }
        assertThat(resolved.version()).matches("\\d+\\.\\d+\\.\\d+");
        assertThat(resolved.path()).isAbsolute();
    }

    @Test
    void installedIsWhatResolveFindsBeforeTheEmbeddedFallback() {
        Optional<RedisBinary> installed = RedisBinary.installed();
        if (installed.isPresent()) {
            assertThat(installed.get().source()).isIn("RELOCK_REDIS_SERVER", "PATH");
        }
        if (!"embedded".equals(System.getProperty(RedisBinary.CHOICE_PROPERTY))) {
            RedisBinary resolved = RedisBinary.resolve();
            assertThat(resolved.path()).isEqualTo(installed.map(RedisBinary::path).orElse(RedisBinary.embedded().path()));
        }
    }

    @Test
    void anExplicitPathMustBeAnExecutableFile() {
        assertThatThrownBy(() -> RedisBinary.of(Path.of("/nonexistent/redis-server")))
                .isInstanceOf(IllegalArgumentException.class);
        RedisBinary explicit = RedisBinary.of(RedisBinary.resolve().path());
        assertThat(explicit.source()).isEqualTo("explicit");
    }
}
