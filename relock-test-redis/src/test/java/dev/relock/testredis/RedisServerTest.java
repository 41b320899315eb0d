package dev.relock.testredis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.SocketTimeoutException;
import java.nio.file.Files;
import java.time.Duration;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("redis")
class RedisServerTest {

    private static RedisClient client;

    @BeforeAll
    static void createClient() {
        client = RedisClient.create();
    }

    @AfterAll
    static void shutDownClient() {
        client.shutdown();
    }

    @AfterEach
    void everyServerWasClosed() {
        assertThat(ProcessRegistry.instance().openProcesses()).isEmpty();
    }

    private static StatefulRedisConnection<String, String> connect(String uri, Duration timeout) {
        RedisURI redisUri = RedisURI.create(uri);
        redisUri.setTimeout(timeout);
        return client.connect(redisUri);
    }

    @Test
    void startsOnLoopbackAnswersPingAndStops() {
        try (RedisServer server = RedisServer.start()) {
            assertThat(server.host()).isEqualTo("127.0.0.1");
            assertThat(server.uri()).isEqualTo("redis://127.0.0.1:" + server.port());
            assertThat(server.uriWithPassword()).isEqualTo(server.uri());
            assertThat(server.isRunning()).isTrue();
            assertThat(ProcFs.isAlive(server.pid())).isTrue();
            try (StatefulRedisConnection<String, String> connection = connect(server.uri(), Duration.ofSeconds(5))) {
                assertThat(connection.sync().ping()).isEqualTo("PONG");
            }
            assertThat(server.execute("PING")).isEqualTo("PONG");

            long pid = server.pid();
            server.stop();

            assertThat(server.isRunning()).isFalse();
            assertThat(ProcFs.isAlive(pid)).isFalse();
            assertThatThrownBy(() -> server.execute("PING"))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("not running");
            server.stop(); // stopping a stopped server does nothing
        }
    }

    @Test
    void killedAppendOnlyServerRestartsOnTheSamePortWithItsData() {
        try (RedisServer server = RedisServer.builder().appendOnly(true).start()) {
            assertThat(server.execute("SET", "survivor", "yes")).isEqualTo("OK");
            int port = server.port();
            long killedPid = server.pid();

            server.kill();
            assertThat(server.isRunning()).isFalse();
            assertThat(ProcFs.isAlive(killedPid)).isFalse();

            server.restart();
            assertThat(server.port()).isEqualTo(port);
            assertThat(server.pid()).isNotEqualTo(killedPid);
            try (StatefulRedisConnection<String, String> connection = connect(server.uri(), Duration.ofSeconds(5))) {
                assertThat(connection.sync().get("survivor")).isEqualTo("yes");
            }
        }
    }

    @Test
    void withoutAppendOnlyARestartKeepsPortAndDirectoryButNotData() {
        try (RedisServer server = RedisServer.start()) {
            server.execute("SET", "ephemeral", "1");
            int port = server.port();

            server.stop();
            server.restart();

            assertThat(server.port()).isEqualTo(port);
            assertThat(server.directory()).isDirectory();
            assertThat(server.execute("GET", "ephemeral")).isNull();
        }
    }

    @Test
    void restartOfARunningServerReplacesTheProcess() {
        try (RedisServer server = RedisServer.start()) {
            long first = server.pid();
            server.restart();
            assertThat(server.pid()).isNotEqualTo(first);
            assertThat(ProcFs.isAlive(first)).isFalse();
            assertThat(server.execute("PING")).isEqualTo("PONG");
        }
    }

    @Test
    void pauseMakesCommandsTimeOutAndResumeAnswersAgain() {
        try (RedisServer server = RedisServer.start();
             StatefulRedisConnection<String, String> connection =
                     connect(server.uri(), TestTimeouts.scaled(Duration.ofMillis(300)))) {
            assertThat(connection.sync().ping()).isEqualTo("PONG");

            server.pause();
            assertThat(server.isPaused()).isTrue();
            assertThat(server.isRunning()).isTrue();
            assertThatThrownBy(() -> connection.sync().ping()).isInstanceOf(RedisCommandTimeoutException.class);
            assertThatThrownBy(() -> server.execute("PING"))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("paused");

            server.resume();
            assertThat(server.isPaused()).isFalse();
            assertThat(connection.sync().ping()).isEqualTo("PONG");
            assertThat(server.execute("PING")).isEqualTo("PONG");
        }
    }

    @Test
    void closingAPausedServerEndsIt() {
        RedisServer server = RedisServer.start();
        long pid = server.pid();
        server.pause();

        server.close();

        assertThat(ProcFs.isAlive(pid)).isFalse();
    }

    @Test
    void flushAllRemovesEveryKey() {
        try (RedisServer server = RedisServer.start()) {
            server.execute("SET", "a", "1");
            server.execute("SET", "b", "2");
            assertThat(server.execute("DBSIZE")).isEqualTo("2");

            server.flushAll();

            assertThat(server.execute("DBSIZE")).isEqualTo("0");
        }
    }

    @Test
    void scriptFlushForgetsLoadedScripts() {
        try (RedisServer server = RedisServer.start()) {
            String sha = server.execute("SCRIPT", "LOAD", "return 1");
            assertThat(server.execute("SCRIPT", "EXISTS", sha)).isEqualTo("[1]");

            server.scriptFlush();

            assertThat(server.execute("SCRIPT", "EXISTS", sha)).isEqualTo("[0]");
            assertThatThrownBy(() -> server.execute("EVALSHA", sha, "0"))
                    .isInstanceOf(RedisCommandExecutionException.class).hasMessageContaining("NOSCRIPT");
        }
    }

    @Test
    void aPasswordIsRequiredFromClientsButNotFromTheFixture() {
        try (RedisServer server = RedisServer.builder().password("s3cret pass:@").start()) {
            assertThat(server.password()).contains("s3cret pass:@");
            assertThat(server.uriWithPassword())
                    .isEqualTo("redis://:s3cret%20pass%3A%40@127.0.0.1:" + server.port());
            assertThat(server.execute("PING")).isEqualTo("PONG");

            assertThatThrownBy(() -> {
                try (StatefulRedisConnection<String, String> anonymous = connect(server.uri(), Duration.ofSeconds(5))) {
                    anonymous.sync().ping();
                }
            }).isInstanceOf(RedisException.class);
            try (StatefulRedisConnection<String, String> authenticated =
                         connect(server.uriWithPassword(), Duration.ofSeconds(5))) {
                assertThat(authenticated.sync().ping()).isEqualTo("PONG");
            }
        }
    }

    @Test
    void executeRendersEveryKindOfReplyAsText() {
        try (RedisServer server = RedisServer.start()) {
            assertThat(server.execute("SET", "k", "v")).isEqualTo("OK");
            assertThat(server.execute("get", "k")).isEqualTo("v");
            assertThat(server.execute("INCR", "n")).isEqualTo("1");
            assertThat(server.execute("GET", "missing")).isNull();
            server.execute("RPUSH", "list", "a", "b");
            assertThat(server.execute("LRANGE", "list", "0", "-1")).isEqualTo("[a, b]");
            assertThat(server.execute("CONFIG", "SET", "maxmemory", "10mb")).isEqualTo("OK");
            assertThat(server.execute("CONFIG", "GET", "maxmemory")).isEqualTo("[maxmemory, 10485760]");
            assertThat(server.execute("DEBUG", "SLEEP", "0")).isEqualTo("OK");
            assertThatThrownBy(() -> server.execute("NO-SUCH-COMMAND"))
                    .isInstanceOf(RedisCommandExecutionException.class);
        }
    }

    @Test
    void aclUsersCreatedThroughExecuteCanLogIn() {
        try (RedisServer server = RedisServer.start()) {
            assertThat(server.execute("ACL", "SETUSER", "bob", "on", ">bobs-pw", "~*", "+@all")).isEqualTo("OK");

            RedisURI asBob = RedisURI.builder().withHost(server.host()).withPort(server.port())
                    .withAuthentication("bob", "bobs-pw").withTimeout(Duration.ofSeconds(5)).build();
            try (StatefulRedisConnection<String, String> connection = client.connect(asBob)) {
                assertThat(connection.sync().aclWhoami()).isEqualTo("bob");
            }
        }
    }

    @Test
    void configDirectivesReachTheServerAndFixtureOwnedOnesAreRefused() {
        try (RedisServer server = RedisServer.builder()
                .config("databases", "4")
                .config("maxmemory-policy", "allkeys-lru")
                .start()) {
            assertThat(server.execute("CONFIG", "GET", "databases")).isEqualTo("[databases, 4]");
            assertThat(server.execute("CONFIG", "GET", "maxmemory-policy")).isEqualTo("[maxmemory-policy, allkeys-lru]");
            assertThat(server.execute("CONFIG", "GET", "bind")).isEqualTo("[bind, 127.0.0.1]");
        }
        assertThatThrownBy(() -> RedisServer.builder().config("port", "1"))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> RedisServer.builder().config("requirepass", "x"))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void anExplicitPortIsUsed() throws IOException {
        int port;
        try (ServerSocket probe = new ServerSocket()) {
            probe.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            port = probe.getLocalPort();
        }
        try (RedisServer server = RedisServer.builder().port(port).start()) {
            assertThat(server.port()).isEqualTo(port);
            assertThat(server.execute("PING")).isEqualTo("PONG");
            assertThatThrownBy(() -> RedisServer.builder().port(port).start())
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("another server of this JVM");
        }
    }

    @Test
    void aPortSomebodyElseListensOnFailsTheStartWithoutTalkingToThem() throws IOException {
        try (ServerSocket squatter = new ServerSocket()) {
            squatter.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));

            assertThatThrownBy(() -> RedisServer.builder().port(squatter.getLocalPort()).start())
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("address already in use")
                    .hasMessageContaining("tail of");

            squatter.setSoTimeout(1);
            assertThatThrownBy(squatter::accept).isInstanceOf(SocketTimeoutException.class);
        }
    }

    @Test
    void closeEndsTheProcessAndDeletesTheDirectoryOnce() {
        RedisServer server = RedisServer.start();
        long pid = server.pid();
        assertThat(server.directory()).isDirectory();
        assertThat(server.directory().resolve("redis.log")).exists();

        server.close();
        server.close();

        assertThat(ProcFs.isAlive(pid)).isFalse();
        assertThat(Files.exists(server.directory())).isFalse();
        assertThat(server.isRunning()).isFalse();
        assertThatThrownBy(server::restart).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
    }
}
