package dev.relock.testredis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;

/**
 * A loopback port that refuses connections for as long as this object is open.
 *
 * <p>A socket is bound to the port and never listens: a connection there is refused at once, and no
 * other socket without {@code SO_REUSEADDR} on both sides (a redis-server this fixture starts in another test,
 * say) can bind the port meanwhile. A port that was merely free a moment ago promises neither: a test that
 * expected "connection refused" on one was once answered by another test's redis-server.
 */
public final class ClosedPort implements AutoCloseable {

    private final Socket socket;

    private ClosedPort(Socket socket) {
        this.socket = socket;
    }

    /** Binds a free port on {@value RedisServer#HOST}. */
    public static ClosedPort open() {
        Socket socket = new Socket();
        try {
            socket.setReuseAddress(false);
            socket.bind(new InetSocketAddress(RedisServer.HOST, 0));
            return new ClosedPort(socket);
        } catch (IOException e) {
            try {
                socket.close();
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw new UncheckedIOException("could not bind a loopback port", e);
        }
    }

    /** The port; refuses connections until {@link #close()}. */
    public int port() {
        return socket.getLocalPort();
    }

    /** {@code redis://127.0.0.1:<port>}. */
    public String uri() {
        return "redis://" + RedisServer.HOST + ":" + port();
    }

    /** Frees the port. */
    @Override
    public void close() {
        try {
            socket.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
