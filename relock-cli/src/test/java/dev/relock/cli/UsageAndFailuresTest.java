package dev.relock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.relock.testredis.ClosedPort;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Usage mistakes exit 64 with the mistake and the synopsis; an unreachable Redis exits 69 with one
 * line; neither shows a stack trace. Help shows examples. Through the real launcher.
 */
@Tag("launcher")
class UsageAndFailuresTest {

    @BeforeAll
    static void build() {
        Launcher.ensureBuilt();
    }

    @ParameterizedTest(name = "relock {0}")
    @CsvSource(delimiter = '|', value = {
        "exec --bogus name -- true          | Unknown option: '--bogus'",
        "exec                               | Missing required parameters: 'NAME', 'COMMAND'",
        "exec name                          | Missing required parameter: 'COMMAND'",
        "exec --wait -5s name -- true       | '-5s' is not a duration",
        "exec --lease 10ms name -- true     | --lease must be at least 30ms",
        "exec --on-lost=ignore name -- true | Invalid value for option '--on-lost'",
        "list --bogus                       | Unknown option: '--bogus'",
        "inspect                            | Missing required parameter: 'NAME'",
        "unlock name                        | unlock needs --force",
        "frobnicate                         | Unmatched argument",
        "''                                 | a command is required",
        "--redis redis://x:1                | a command is required",
        "--verbose                          | a command is required",
        "--prefix                           | Missing required parameter for option '--prefix'"
    })
    void usageMistakeExits64WithTheMistakeAndTheSynopsis(String commandLine, String message) {
        String[] args = commandLine.isEmpty() ? new String[0] : commandLine.split(" +");
        // a Redis nobody listens on: none of these may get as far as connecting
        Launcher.Result result;
        try (ClosedPort closed = ClosedPort.open()) {
            result = Launcher.start(List.of(), Map.of("RELOCK_REDIS", closed.uri()), args).await();
        }

        assertThat(result.exitCode()).as(result.describe()).isEqualTo(ExitCodes.USAGE);
        assertThat(result.stderr()).contains(message).contains("Usage: relock").doesNotContain("Exception")
                .doesNotContain("\tat ");
        assertThat(result.stdout()).isEmpty();
    }

    @Test
    void unreachableRedisExits69WithOneLineNamingTheAddressButNotThePassword() {
        try (ClosedPort closed = ClosedPort.open()) {
            int port = closed.port();
            Launcher.Result result = Launcher.run("exec", "--redis", "redis://app:s3cret@127.0.0.1:" + port,
                    "name", "--", "true");

            assertThat(result.exitCode()).as(result.describe()).isEqualTo(ExitCodes.UNAVAILABLE);
            assertThat(result.stderrLines()).singleElement().asString()
                    .startsWith("relock: ").contains("127.0.0.1:" + port).doesNotContain("s3cret");

            Launcher.Result list = Launcher.run("list", "--redis", "redis://127.0.0.1:" + port);
            assertThat(list.exitCode()).as(list.describe()).isEqualTo(ExitCodes.UNAVAILABLE);
            assertThat(list.stderrLines()).singleElement().asString().contains("127.0.0.1:" + port);

            Launcher.Result verbose = Launcher.run("list", "--verbose", "--redis", "redis://127.0.0.1:" + port);
            assertThat(verbose.exitCode()).isEqualTo(ExitCodes.UNAVAILABLE);
            assertThat(verbose.stderr()).contains("RedisUnavailableException").contains("\tat ");
        }
    }

    @Test
    void theSharedOptionsMayComeBeforeTheCommand() {
        try (ClosedPort closed = ClosedPort.open()) {
            int port = closed.port();
            // a closed port: the command reports it only if --redis reached it
            Launcher.Result list = Launcher.run("--redis", "redis://127.0.0.1:" + port, "list");
            assertThat(list.exitCode()).as(list.describe()).isEqualTo(ExitCodes.UNAVAILABLE);
            assertThat(list.stderrLines()).singleElement().asString().contains("127.0.0.1:" + port);

            Launcher.Result verbose = Launcher.run("--verbose", "--redis=redis://127.0.0.1:" + port, "--prefix", "p",
                    "inspect", "name");
            assertThat(verbose.exitCode()).as(verbose.describe()).isEqualTo(ExitCodes.UNAVAILABLE);
            assertThat(verbose.stderr()).contains("127.0.0.1:" + port).contains("RedisUnavailableException").contains("\tat ");

            Launcher.Result unknown = Launcher.run("--bogus", "list");
            assertThat(unknown.exitCode()).as(unknown.describe()).isEqualTo(ExitCodes.USAGE);
            assertThat(unknown.stderr()).contains("Unknown option: '--bogus'");
        }
    }

    @ParameterizedTest(name = "relock {0} --help")
    @CsvSource({"exec", "list", "inspect", "unlock"})
    void everyCommandHasHelpWithExamples(String command) {
        Launcher.Result result = Launcher.run(command, "--help");

        assertThat(result.exitCode()).as(result.describe()).isZero();
        assertThat(result.stdout()).contains("Usage: relock " + command).contains("Examples:");
        if (command.equals("exec")) {
            assertThat(result.stdout()).as("a cron example").containsPattern("(?m)^ +\\*/15 \\* \\* \\* \\* relock exec ");
        }
    }
}
