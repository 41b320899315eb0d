package dev.relock.cli.demo;

import dev.relock.RedisUnavailableException;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * The Redis a demo runs against: one the user named or found at the default address, or a private
 * {@code redis-server} started for the run ({@code $RELOCK_REDIS_SERVER}, else {@code redis-server} on the PATH,
 * else the binary from the embedded-redis artifact, see {@link PrivateRedisServer}) and stopped by {@link #close()}.
 */
public final class RedisTarget implements AutoCloseable {

    private final String uri;
    private final String description;
    private final PrivateRedisServer server;

    private RedisTarget(String uri, String description, PrivateRedisServer server) {
        this.uri = uri;
        this.description = description;
        this.server = server;
    }

    /** A Redis somebody else runs; {@code why} says how it was chosen, e.g. "from --redis". */
    public static RedisTarget existing(String uri, String why) {
        return new RedisTarget(uri, RedisAddress.display(uri) + " (" + why + ")", null);
    }

    /**
     * Starts a private redis-server on a free loopback port; {@code err} is told if the embedded-redis jar must be
     * fetched for it.
     *
     * @throws RedisUnavailableException if no redis-server can be found or started here
     */
    public static RedisTarget privateServer(String why, PrintWriter err) throws InterruptedException {
        PrivateRedisServer server;
        try {
            server = PrivateRedisServer.start(err);
        } catch (RuntimeException e) {
            throw new RedisUnavailableException("cannot start a private redis-server: "
                    + WorkerProtocol.oneLine(e.getMessage()) + "; install redis-server on the PATH, set"
                    + " $RELOCK_REDIS_SERVER to one, or pass --redis URI", e);
        }
        String found = switch (server.binarySource()) {
            case "PATH" -> "found on the PATH";
            case "embedded-redis" -> "from the embedded-redis artifact";
            case "RELOCK_REDIS_SERVER" -> "from $RELOCK_REDIS_SERVER";
            default -> server.binarySource();
        };
        return new RedisTarget(server.uri(), server.uri() + ", a private redis-server " + server.binaryVersion()
                + " (" + server.binaryPath() + ", " + found + ") started because " + why + "; stopped at the end",
                server);
    }

    /** How a Redis at an address answered a PING. */
    public enum Probe {
        /** It answered PONG: usable without credentials. */
        ANSWERS,
        /** Something accepted the connection but did not answer PONG (a password is needed, or it is no Redis). */
        REFUSES,
        /** Nothing accepted the connection. */
        NOTHING
    }

    /** Sends one inline PING to {@code host:port}, waiting at most {@code timeout} for each step. */
    public static Probe probe(String host, int port, Duration timeout) {
        try (Socket socket = new Socket()) {
            try {
                socket.connect(new InetSocketAddress(host, port), (int) timeout.toMillis());
            } catch (IOException e) {
                return Probe.NOTHING;
            }
            socket.setSoTimeout((int) timeout.toMillis());
            OutputStream out = socket.getOutputStream();
            out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            String reply = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII))
                    .readLine();
            return "+PONG".equals(reply) ? Probe.ANSWERS : Probe.REFUSES;
        } catch (IOException e) {
            return Probe.REFUSES;
        }
    }

    public String uri() {
        return uri;
    }

    /** Which Redis this is, without credentials, and why it was chosen. */
    public String description() {
        return description;
    }

    /** Stops the private server, if this is one. */
    @Override
    public void close() {
        if (server != null) {
            server.close();
        }
    }
}
