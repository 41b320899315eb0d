package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import dev.relock.testredis.RedisServer;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SslOptions;
import io.lettuce.core.SslVerifyMode;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * relock over TLS ({@code rediss://}): a redis-server with a TLS port and a self-signed certificate made by openssl.
 * Skipped when openssl is missing or the redis-server was built without TLS.
 */
@Tag("redis")
class TlsSecurityTest {

    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(2);

    @TempDir
    static Path certificates;

    private static RedisServer server;
    private static int tlsPort;

    @BeforeAll
    static void startTlsServer() throws Exception {
        Path cert = certificates.resolve("cert.pem");
        Path key = certificates.resolve("key.pem");
        Assumptions.assumeTrue(makeSelfSignedCertificate(cert, key), "openssl could not make a certificate");
        tlsPort = freeLoopbackPort();
        try {
            server = RedisServer.builder()
                    .config("tls-port", Integer.toString(tlsPort))
                    .config("tls-cert-file", quoted(cert))
                    .config("tls-key-file", quoted(key))
                    .config("tls-ca-cert-file", quoted(cert))
                    .config("tls-auth-clients", "no")
                    .start();
        } catch (IllegalStateException e) {
            // a redis-server built without TLS refuses the tls-* directives and does not start
            Assumptions.abort("redis-server does not start with TLS: " + e.getMessage());
        }
    }

    @AfterAll
    static void stopServer() {
        if (server != null) {
            server.close();
        }
    }

    private static String tlsUri(String query) {
        return "rediss://" + RedisServer.HOST + ":" + tlsPort + query;
    }

    @Test
    void locksWorkOverTlsWithoutPeerVerification() throws Exception {
        try (RelockClient first = RelockClient.builder().redisUri(tlsUri("?verifyPeer=NONE"))
                        .commandTimeout(COMMAND_TIMEOUT).build();
                RelockClient second = RelockClient.builder().redisUri(tlsUri("?verifyPeer=NONE"))
                        .commandTimeout(COMMAND_TIMEOUT).build()) {
            assertHandOffWorks(first, second, "over-tls");
        }
    }

    @Test
    void locksWorkOverTlsWithACallersLettuceClientThatTrustsTheCertificate() throws Exception {
        RedisURI uri = RedisURI.create(tlsUri(""));
        uri.setVerifyPeer(SslVerifyMode.FULL);
        RedisClient lettuce = RedisClient.create(uri);
        try {
            lettuce.setOptions(ClientOptions.builder()
                    .sslOptions(SslOptions.builder().trustManager(certificates.resolve("cert.pem").toFile()).build())
                    .build());
            try (RelockClient first = RelockClient.builder().redisClient(lettuce).commandTimeout(COMMAND_TIMEOUT).build();
                    RelockClient second = RelockClient.builder().redisClient(lettuce)
                            .commandTimeout(COMMAND_TIMEOUT).build()) {
                assertHandOffWorks(first, second, "over-verified-tls");
            }
        } finally {
            lettuce.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }

    @Test
    void anUntrustedCertificateIsRefusedWithARelockException() {
        Throwable failure = catchThrowable(() -> RelockClient.builder().redisUri(tlsUri(""))
                .commandTimeout(COMMAND_TIMEOUT).build().close());
        assertThat(failure).isInstanceOf(RelockException.class).hasMessageContaining(Integer.toString(tlsPort));
    }

    @Test
    void plainTextToTheTlsPortFailsWithARelockException() {
        Throwable failure = catchThrowable(() -> RelockClient.builder()
                .redisUri("redis://" + RedisServer.HOST + ":" + tlsPort)
                .commandTimeout(COMMAND_TIMEOUT).build().close());
        assertThat(failure).isInstanceOf(RelockException.class);
    }

    private static void assertHandOffWorks(RelockClient first, RelockClient second, String name) throws Exception {
        RelockLock lock = first.lock(name);
        assertThat(lock.tryLock()).isTrue();
        assertThat(lock.fencingToken()).isPresent();
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
        // the default lease is 30 s: the waiter gets the lock long before it only through the wake-up message
        assertThat(waiter.get(10, TimeUnit.SECONDS)).isTrue();
        assertThat(lock.isLocked()).isFalse();
    }

    private static boolean makeSelfSignedCertificate(Path cert, Path key) throws InterruptedException {
        try {
            Process openssl = new ProcessBuilder("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
                    "-keyout", key.toString(), "-out", cert.toString(), "-days", "2",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1")
                    .redirectErrorStream(true)
                    .redirectOutput(certificates.resolve("openssl.log").toFile())
                    .start();
            if (!openssl.waitFor(60, TimeUnit.SECONDS)) {
                openssl.destroyForcibly();
                return false;
            }
            return openssl.exitValue() == 0 && Files.size(cert) > 0 && Files.size(key) > 0;
        } catch (IOException e) {
            return false;
        }
    }

    private static int freeLoopbackPort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName(RedisServer.HOST))) {
            return socket.getLocalPort();
        }
    }

    private static String quoted(Path path) {
        return "\"" + path.toAbsolutePath().toString().replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }
}
