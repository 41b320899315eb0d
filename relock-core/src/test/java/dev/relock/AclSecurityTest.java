package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import dev.relock.testredis.RedisServer;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Authentication and ACLs: relock works with {@code requirepass} and with an ACL user limited to its keys and
 * channels, fails with a {@link RelockException} when credentials are wrong or missing, and never puts a password
 * into an exception (message, cause, toString) or a log line.
 */
@Tag("redis")
class AclSecurityTest {

    private static final String SERVER_PASSWORD = "Server-Secret-7f3a9c";
    private static final String WRONG_PASSWORD = "Wrong-Secret-51e2b8";
    private static final String USER_PASSWORD = "User-Secret-0d4c6e";
    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(1);

    private static RelockClient connect(String uri) {
        return RelockClient.builder().redisUri(uri).commandTimeout(COMMAND_TIMEOUT).build();
    }

    private static String userUri(RedisServer server, String user, String password) {
        return "redis://" + user + ":" + password + "@" + server.host() + ":" + server.port();
    }

    /** Locks, re-enters, and hands the lock to a waiter of a second client, which needs the wake-up channel. */
    private static void assertLocksWork(RedisServer server, String uri, String name) throws Exception {
        try (RelockClient first = connect(uri); RelockClient second = connect(uri)) {
            RelockLock lock = first.lock(name);
            assertThat(lock.tryLock()).isTrue();
            assertThat(lock.tryLock()).isTrue();
            assertThat(second.lock(name).tryLock()).isFalse();
            CompletableFuture<Boolean> waiter = CompletableFuture.supplyAsync(() -> {
                try {
                    Optional<LockHandle> handle = second.lock(name).tryAcquire(Duration.ofSeconds(20));
                    handle.ifPresent(LockHandle::close);
                    return handle.isPresent();
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            await().atMost(Duration.ofSeconds(5))
                    .until(() -> "1".equals(server.execute("ZCARD", "relock:{" + name + "}:queue")));
            lock.unlock();
            lock.unlock();
            // the lease is 30 s: getting the lock well before that means the wake-up message arrived
            assertThat(waiter.get(10, TimeUnit.SECONDS)).isTrue();
        }
    }

    @Test
    void requirePassWorksWithThePasswordInTheUri() throws Exception {
        try (RedisServer server = RedisServer.builder().password(SERVER_PASSWORD).start()) {
            assertLocksWork(server, server.uriWithPassword(), "with-requirepass");
        }
    }

    @Test
    void missingOrWrongPasswordFailsWithoutRevealingIt() throws Exception {
        try (RedisServer server = RedisServer.builder().password(SERVER_PASSWORD).start()) {
            String wrong = "redis://:" + WRONG_PASSWORD + "@" + server.host() + ":" + server.port();
            assertConnectFailsWithoutSecrets(wrong, RelockException.class);
            assertConnectFailsWithoutSecrets(server.uri(), RelockException.class);
            assertConnectFailsWithoutSecrets(userUri(server, "default", WRONG_PASSWORD), RelockException.class);
        }
    }

    @ParameterizedTest(name = "channels: {0}")
    @ValueSource(strings = {"&*", "resetchannels &relock:*"})
    void anAclUserLimitedToRelockKeysAndChannelsCanLock(String channels) throws Exception {
        try (RedisServer server = RedisServer.start()) {
            setUser(server, "locker", USER_PASSWORD, "~relock:*", channels, "+@all");
            assertLocksWork(server, userUri(server, "locker", USER_PASSWORD), "acl-user");
        }
    }

    @Test
    void anAclUserWithAWrongPasswordFailsWithoutRevealingIt() throws Exception {
        try (RedisServer server = RedisServer.start()) {
            setUser(server, "locker", USER_PASSWORD, "~relock:*", "&*", "+@all");
            assertConnectFailsWithoutSecrets(userUri(server, "locker", WRONG_PASSWORD), RelockException.class);
            assertConnectFailsWithoutSecrets(userUri(server, "nobody", USER_PASSWORD), RelockException.class);
        }
    }

    @Test
    void anAclUserWithoutTheWakeUpChannelIsRefusedAtConnect() throws Exception {
        try (RedisServer server = RedisServer.start()) {
            // Redis 6.2 lets every user use every channel by default; Redis 7 gives none
            Assumptions.assumeTrue(majorVersion(server) >= 7, "needs Redis 7 channel ACLs");
            setUser(server, "locker", USER_PASSWORD, "~relock:*", "resetchannels", "+@all");
            Throwable failure = assertConnectFailsWithoutSecrets(
                    userUri(server, "locker", USER_PASSWORD), RelockException.class);
            assertThat(failure).hasMessageContaining("NOPERM");
        }
    }

    @Test
    void anAclUserWithoutAccessToTheLockKeysGetsARelockExceptionNamingTheLock() throws Exception {
        try (RedisServer server = RedisServer.start()) {
            setUser(server, "stranger", USER_PASSWORD, "~other:*", "&*", "+@all");
            try (RelockClient client = connect(userUri(server, "stranger", USER_PASSWORD))) {
                Throwable failure = catchThrowable(() -> client.lock("forbidden").tryLock());
                assertThat(failure)
                        .isInstanceOf(RelockException.class)
                        .isNotInstanceOf(RedisUnavailableException.class)
                        .hasMessageContaining("'forbidden'")
                        .hasMessageContaining("NOPERM");
                assertThat(stackTrace(failure)).doesNotContain(USER_PASSWORD);
            }
            assertThat(server.execute("EXISTS", "relock:{forbidden}")).isEqualTo("0");
        }
    }

    @Test
    void aPasswordNeverAppearsWhenRedisIsUnreachableOrTheUriIsBroken() throws Exception {
        try (RedisServer server = RedisServer.builder().password(SERVER_PASSWORD).start()) {
            String uri = server.uriWithPassword();
            server.stop();
            assertConnectFailsWithoutSecrets(uri, RedisUnavailableException.class);
        }
        assertConnectFailsWithoutSecrets("redis://locker:" + USER_PASSWORD + "@[::1", IllegalArgumentException.class);
    }

    private static void setUser(RedisServer server, String user, String password, String... rules) {
        String[] command = new String[5 + rules.length];
        command[0] = "ACL";
        command[1] = "SETUSER";
        command[2] = user;
        command[3] = "on";
        command[4] = ">" + password;
        int i = 5;
        for (String rule : rules) {
            command[i++] = rule;
        }
        // "resetchannels &relock:*" is two rules
        server.execute(String.join(" ", command).split(" "));
    }

    private static int majorVersion(RedisServer server) {
        String version = server.binary().version();
        return Integer.parseInt(version.substring(0, version.indexOf('.')));
    }

    /**
     * Builds a client that must fail; checks the exception type and that no password shows in the whole exception
     * (messages, causes, suppressed, toString) or in anything logged to standard error meanwhile.
     */
    private static Throwable assertConnectFailsWithoutSecrets(String uri, Class<? extends Throwable> type) {
        PrintStream originalErr = System.err;
        ByteArrayOutputStream logged = new ByteArrayOutputStream();
        Throwable failure;
        System.setErr(new PrintStream(new TeeStream(originalErr, logged), true, StandardCharsets.UTF_8));
        try {
            failure = catchThrowable(() -> connect(uri).close());
        } finally {
            System.err.flush();
            System.setErr(originalErr);
        }
        assertThat(failure).as("connecting with %s", "a bad URI or credentials").isInstanceOf(type);
        String everything = stackTrace(failure) + "\n" + logged.toString(StandardCharsets.UTF_8);
        for (String secret : new String[] {SERVER_PASSWORD, WRONG_PASSWORD, USER_PASSWORD}) {
            assertThat(everything).as("exception and log output").doesNotContain(secret);
        }
        return failure;
    }

    private static String stackTrace(Throwable failure) {
        StringWriter out = new StringWriter();
        failure.printStackTrace(new PrintWriter(out));
        return out + "\n" + failure;
    }

    /** Copies what is written to standard error into a buffer as well. */
    private static final class TeeStream extends OutputStream {
        private final PrintStream original;
        private final ByteArrayOutputStream copy;

        TeeStream(PrintStream original, ByteArrayOutputStream copy) {
            this.original = original;
            this.copy = copy;
        }

        @Override
        public void write(int b) {
            copy.write(b);
            original.write(b);
        }

        @Override
        public void write(byte[] b, int off, int len) {
            copy.write(b, off, len);
            original.write(b, off, len);
        }
    }
}
