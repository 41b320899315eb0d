package dev.relock.testredis;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * A TCP proxy on {@value #HOST} in front of one {@code host:port}, with faults a test switches on and off: latency
 * (both ways or replies only), a partition (black hole), lost replies, reset connections and refused new ones, each
 * also switched on when a request holding given bytes passes ({@link Connection#onRequestWith}).
 * Only JDK classes; meant for a handful of connections, not for throughput.
 *
 * <pre>{@code
 * try (RedisServer redis = RedisServer.start(); TcpProxy proxy = TcpProxy.to(redis)) {
 *     RedisClient client = RedisClient.create(proxy.uri());   // redis://127.0.0.1:<proxy port>
 *     proxy.latency(Duration.ofMillis(50));   // +50 ms each way: a round trip takes 100 ms longer
 *     proxy.replyLatency(Duration.ofMillis(800)); // requests go through at once, replies come 800 ms late
 *     proxy.loseNextReplyAndReset();          // the server runs what it got, its next reply is lost, then RST
 *     proxy.loseNextReplyAndClose();          // the same, then FIN: a default Lettuce client re-sends
 *     proxy.blackhole();                      // commands time out, connections stay open
 *     proxy.heal();                           // what was held is delivered now
 *     proxy.cutConnections();                 // every current connection is reset
 *     proxy.rejectNew(true);                  // new connections are reset at once
 *     proxy.connections().get(0).replyLatency(Duration.ofMillis(800)); // one connection only (of a client
 *                                             // that has several: commands slow, pub/sub on time)
 *     Connection commands = proxy.connections().get(0);
 *     commands.onRequestWith(sha, () -> commands.replyLatency(Duration.ofSeconds(5))); // from one command on
 * }
 * }</pre>
 *
 * <p>What a partition does: {@link #blackhole()} stops forwarding in both directions but keeps every connection
 * open and keeps accepting new ones, so a client sees timeouts, never a reset or a refused connection. The bytes
 * sent meanwhile are <em>held</em>, not dropped, and {@link #heal()} delivers them in order: that is what TCP does
 * when a partition heals before the peers give up (it retransmits; the byte stream never has holes), and it keeps
 * a Redis connection in step, since every reply still arrives, late. A partition that outlasts the peers' patience
 * ends with dead connections: model that with {@link #cutConnections()} (before or after {@link #heal()}); the
 * client then sees a reset and reconnects.
 *
 * <p>Design notes: one daemon thread accepts; each connection has, per direction, a reader thread that queues
 * chunks stamped with their due time ({@code now + latency} at the moment they were read) and a writer thread that
 * writes them in order once due and while no black hole is on. A latency change affects chunks read afterwards.
 * All switches are volatile fields read by those threads; {@code blackholed} is also guarded by {@link #gate} so
 * that writers waiting in the black hole are woken by {@link #heal()}. Methods may be called from any thread.
 */
public final class TcpProxy implements AutoCloseable {

    /** The address the proxy listens on. */
    public static final String HOST = RedisProcess.HOST;

    private static final int CHUNK_SIZE = 16 * 1024;
    // Connection.loseNextReply: what the writer toward the client does with its next chunk
    private static final int FORWARD = 0;
    private static final int LOSE_AND_RESET = 1;
    private static final int LOSE_AND_CLOSE = 2;
    private static final AtomicInteger NEXT_ID = new AtomicInteger();

    private final String targetHost;
    private final int targetPort;
    private final ServerSocket listener;
    private final Set<Connection> links = ConcurrentHashMap.newKeySet();
    private final AtomicLong accepted = new AtomicLong();
    private final Object gate = new Object();
    private final int id = NEXT_ID.incrementAndGet();

    // toward the server, toward the client
    private volatile long requestLatencyNanos;
    private volatile long replyLatencyNanos;
    private volatile boolean blackholed; // written under gate
    private volatile boolean rejectNew;
    private volatile boolean closed;

    private TcpProxy(String targetHost, int targetPort, ServerSocket listener) {
        this.targetHost = targetHost;
        this.targetPort = targetPort;
        this.listener = listener;
    }

    /**
     * Starts a proxy on a free loopback port that forwards to {@code host:port}. The target is connected to once
     * per accepted connection; if it cannot be reached, that connection is reset.
     *
     * @throws IllegalArgumentException if the port is not 1..65535
     * @throws UncheckedIOException if no listening socket can be opened
     */
    public static TcpProxy start(String host, int port) {
        Objects.requireNonNull(host, "host");
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("port must be 1..65535, was " + port);
        }
        ServerSocket listener;
        try {
            listener = new ServerSocket(0, 50, InetAddress.getByName(HOST));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot listen on " + HOST, e);
        }
        TcpProxy proxy = new TcpProxy(host, port, listener);
        daemon(proxy.name("accept"), proxy::acceptLoop).start();
        return proxy;
    }

    /** Starts a proxy in front of {@code server} (its host and port, which survive its restarts). */
    public static TcpProxy to(RedisServer server) {
        return start(server.host(), server.port());
    }

    /** Always {@value #HOST}. */
    public String host() {
        return HOST;
    }

    /** The port clients connect to. */
    public int port() {
        return listener.getLocalPort();
    }

    /** {@code redis://127.0.0.1:<proxy port>}, for a Redis client (no credentials). */
    public String uri() {
        return "redis://" + HOST + ":" + port();
    }

    /** The {@code host:port} behind the proxy. */
    public String target() {
        return targetHost + ":" + targetPort;
    }

    /**
     * Delays every chunk by {@code oneWay} in each direction, so a request and its reply take {@code 2 * oneWay}
     * longer. {@link Duration#ZERO} turns it off. Applies to bytes read from now on.
     *
     * @throws IllegalArgumentException if negative
     */
    public void latency(Duration oneWay) {
        long nanos = nonNegativeNanos(oneWay, "latency");
        requestLatencyNanos = nanos;
        replyLatencyNanos = nanos;
    }

    /**
     * Delays only what the server sends (replies, pub/sub messages) by {@code delay}; what clients send goes on
     * at the request latency ({@link #latency} sets both). The server runs a command at once and the client
     * hears of it late: past its timeout, a command that was applied looks lost. Applies to bytes read from
     * now on; {@link Duration#ZERO} turns it off.
     *
     * @throws IllegalArgumentException if negative
     */
    public void replyLatency(Duration delay) {
        replyLatencyNanos = nonNegativeNanos(delay, "reply latency");
    }

    /**
     * On every current connection, the next bytes the server sends are dropped and the connection is then
     * reset on both sides: what the server received it runs, but the client never hears of it (a reply lost
     * with its connection). A connection over which the server sends nothing more is left alone.
     */
    public void loseNextReplyAndReset() {
        for (Connection link : links) {
            link.loseNextReplyAndReset();
        }
    }

    /**
     * As {@link #loseNextReplyAndReset()}, but the connection is then closed in order (FIN), as by a peer that
     * went away: a Lettuce client on its default options sends the commands that were in flight again after it
     * reconnected (at-least-once), so the server runs the one whose reply was lost twice.
     */
    public void loseNextReplyAndClose() {
        for (Connection link : links) {
            link.loseNextReplyAndClose();
        }
    }

    private static long nonNegativeNanos(Duration duration, String what) {
        Objects.requireNonNull(duration, what);
        if (duration.isNegative()) {
            throw new IllegalArgumentException(what + " must not be negative, was " + duration);
        }
        return duration.toNanos();
    }

    /**
     * Starts a partition: nothing is forwarded in either direction until {@link #heal()}; connections stay open,
     * new ones are accepted, bytes are held (see the class comment). Idempotent.
     */
    public void blackhole() {
        synchronized (gate) {
            blackholed = true;
        }
    }

    /** Ends a partition: the bytes held are delivered in order, forwarding goes on. Idempotent. */
    public void heal() {
        synchronized (gate) {
            blackholed = false;
            gate.notifyAll();
        }
    }

    /** True between {@link #blackhole()} and {@link #heal()}. */
    public boolean isBlackholed() {
        return blackholed;
    }

    /**
     * Resets every current connection on both sides (TCP RST, bytes held or in flight are lost): clients see
     * "connection reset". New connections are accepted as before.
     */
    public void cutConnections() {
        for (Connection link : links) {
            link.reset();
        }
    }

    /** While true, every new connection is reset as soon as it is accepted; current ones are left alone. */
    public void rejectNew(boolean reject) {
        rejectNew = reject;
    }

    /** How many client connections are open through the proxy now. */
    public int connectionCount() {
        return links.size();
    }

    /**
     * The client connections open through the proxy now, in the order they were accepted (a snapshot): each can be
     * slowed or broken on its own, as when one of a client's connections fails and the others go on.
     */
    public List<Connection> connections() {
        return links.stream().sorted(Comparator.comparingLong(link -> link.sequence)).toList();
    }

    /** Stops listening and resets every connection; what a black hole held is lost, not delivered. Idempotent. */
    @Override
    public void close() {
        closed = true;
        try {
            listener.close();
        } catch (IOException ignored) {
            // closing a listening socket has nothing to flush; nothing to report
        }
        // cut before anything is let through: bytes a black hole holds are lost, as at a reset, never delivered
        // (a heal first delivered them, so a client cut off at the end of its test could still act). The reset
        // wakes the writers parked in the black hole, which then find their sockets closed
        cutConnections();
    }

    @Override
    public String toString() {
        return "TcpProxy[" + HOST + ":" + port() + " -> " + target() + (blackholed ? ", blackholed" : "") + "]";
    }

    private void acceptLoop() {
        while (!closed) {
            Socket client;
            try {
                client = listener.accept();
            } catch (IOException e) {
                return; // closed
            }
            if (rejectNew || closed) {
                resetQuietly(client);
                continue;
            }
            Socket upstream = new Socket();
            try {
                upstream.connect(new InetSocketAddress(targetHost, targetPort),
                        (int) TestTimeouts.scaled(Duration.ofSeconds(2)).toMillis());
                client.setTcpNoDelay(true);
                upstream.setTcpNoDelay(true);
            } catch (IOException unreachable) {
                resetQuietly(upstream);
                resetQuietly(client);
                continue;
            }
            Connection link = new Connection(client, upstream, accepted.incrementAndGet());
            links.add(link);
            link.start();
        }
    }

    private String name(String role) {
        return "relock-proxy-" + id + "-" + role;
    }

    private static Thread daemon(String name, Runnable body) {
        Thread thread = new Thread(body, name);
        thread.setDaemon(true);
        return thread;
    }

    private static void resetQuietly(Socket socket) {
        try {
            if (!socket.isClosed()) {
                socket.setSoLinger(true, 0); // close() then sends RST instead of FIN
            }
        } catch (SocketException ignored) {
            // not connected: close() alone is all there is to do
        }
        try {
            socket.close();
        } catch (IOException ignored) {
            // a reset socket has nothing left to report
        }
    }

    /** A fault to run when a request holding {@code marker} passes ({@link Connection#onRequestWith}). */
    private record RequestTrigger(byte[] marker, Runnable fault) {

        boolean firesOn(byte[] bytes, int count) {
            for (int start = 0; start + marker.length <= count; start++) {
                if (Arrays.equals(bytes, start, start + marker.length, marker, 0, marker.length)) {
                    return true;
                }
            }
            return false;
        }
    }

    /** A chunk of bytes due at {@code dueNanos}; a chunk with null bytes marks the end of the stream. */
    private record Chunk(byte[] bytes, long dueNanos) {
    }

    /**
     * One client connection through the proxy and its upstream connection, with the faults that can hit it alone;
     * the proxy's own switches apply to it too. Its four threads end when either socket fails.
     */
    public final class Connection {
        private final Socket client;
        private final Socket upstream;
        private final long sequence; // accept order
        private final AtomicInteger openDirections = new AtomicInteger(2);
        // FORWARD, or set by loseNextReplyAndReset()/…AndClose(): the writer toward the client drops its next
        // chunk, then resets or closes the link
        private volatile int loseNextReply = FORWARD;
        // added to the proxy's reply latency for what the server sends on this connection
        private volatile long ownReplyLatencyNanos;
        // added to the proxy's request latency for what the client sends on this connection
        private volatile long ownRequestLatencyNanos;
        // this connection alone in a partition; written under gate
        private volatile boolean ownBlackhole;
        // set by onRequestWith, cleared by the reader toward the server when it first reads the marker
        private volatile RequestTrigger trigger;

        private Connection(Socket client, Socket upstream, long sequence) {
            this.client = client;
            this.upstream = upstream;
            this.sequence = sequence;
        }

        /**
         * Delays what the server sends on this connection only by {@code delay} more than the proxy's reply latency
         * ({@link TcpProxy#replyLatency}). Applies to bytes read from now on; {@link Duration#ZERO} turns it off.
         *
         * @throws IllegalArgumentException if negative
         */
        public void replyLatency(Duration delay) {
            ownReplyLatencyNanos = nonNegativeNanos(delay, "reply latency");
        }

        /**
         * Delays what the client sends on this connection only by {@code delay} more than the proxy's request latency
         * ({@link TcpProxy#latency}). Applies to bytes read from now on; {@link Duration#ZERO} turns it off.
         *
         * @throws IllegalArgumentException if negative
         */
        public void requestLatency(Duration delay) {
            ownRequestLatencyNanos = nonNegativeNanos(delay, "request latency");
        }

        /**
         * Runs {@code fault} once, on the proxy's reader thread, when the client next sends bytes that contain
         * {@code marker} (US-ASCII; within one read of at most 16 KiB, so keep it short), before those bytes are
         * stamped and passed on: a fault switched on there ({@link #requestLatency}, {@link #replyLatency},
         * {@link #loseNextReplyAndReset}, ...) applies to that request and to what follows it, and a reply latency to
         * every reply the server sends after it read that request. For faults aimed at one command of a client, such
         * as an {@code EVALSHA} of one script: its digest is the marker. A later call replaces an unfired one.
         *
         * @throws IllegalArgumentException if the marker is empty
         */
        public void onRequestWith(String marker, Runnable fault) {
            Objects.requireNonNull(marker, "marker");
            Objects.requireNonNull(fault, "fault");
            if (marker.isEmpty()) {
                throw new IllegalArgumentException("the marker of a request fault must not be empty");
            }
            trigger = new RequestTrigger(marker.getBytes(StandardCharsets.US_ASCII), fault);
        }

        /** {@link TcpProxy#blackhole()} on this connection only: its bytes are held both ways until {@link #heal()}. */
        public void blackhole() {
            synchronized (gate) {
                ownBlackhole = true;
            }
        }

        /** Ends this connection's own partition ({@link #blackhole()}); the proxy's, if on, still holds it. */
        public void heal() {
            synchronized (gate) {
                ownBlackhole = false;
                gate.notifyAll();
            }
        }

        /** {@link TcpProxy#loseNextReplyAndReset()} on this connection only. */
        public void loseNextReplyAndReset() {
            loseNextReply = LOSE_AND_RESET;
        }

        /** {@link TcpProxy#loseNextReplyAndClose()} on this connection only. */
        public void loseNextReplyAndClose() {
            loseNextReply = LOSE_AND_CLOSE;
        }

        /** Resets this connection on both sides (TCP RST), as {@link TcpProxy#cutConnections()} does to all. */
        public void reset() {
            links.remove(this);
            resetQuietly(client);
            resetQuietly(upstream);
            synchronized (gate) {
                gate.notifyAll(); // writers of this link waiting in the black hole see the closed socket and end
            }
        }

        @Override
        public String toString() {
            return "connection #" + sequence + " from port " + client.getPort() + " through " + TcpProxy.this;
        }

        void start() {
            String label = "c" + client.getPort();
            startDirection(client, upstream, label + "-up", false);
            startDirection(upstream, client, label + "-down", true);
        }

        private void startDirection(Socket from, Socket to, String label, boolean toClient) {
            BlockingQueue<Chunk> queue = new LinkedBlockingQueue<>();
            daemon(name(label + "-read"), () -> read(from, queue, toClient)).start();
            daemon(name(label + "-write"), () -> write(queue, to, toClient)).start();
        }

        private void read(Socket from, BlockingQueue<Chunk> queue, boolean toClient) {
            byte[] buffer = new byte[CHUNK_SIZE];
            try (InputStream in = from.getInputStream()) {
                int count;
                while ((count = in.read(buffer)) >= 0) {
                    RequestTrigger armed = trigger;
                    if (!toClient && armed != null && armed.firesOn(buffer, count)) {
                        trigger = null;
                        armed.fault().run();
                    }
                    queue.add(new Chunk(Arrays.copyOf(buffer, count), dueFromNow(toClient)));
                }
                queue.add(new Chunk(null, dueFromNow(toClient)));
            } catch (IOException e) {
                reset();
                queue.add(new Chunk(null, System.nanoTime())); // wakes the writer so that it ends
            }
        }

        /** When bytes read now are due on the other side: now plus the latency of their direction. */
        private long dueFromNow(boolean toClient) {
            return System.nanoTime()
                    + (toClient ? replyLatencyNanos + ownReplyLatencyNanos : requestLatencyNanos + ownRequestLatencyNanos);
        }

        private void write(BlockingQueue<Chunk> queue, Socket to, boolean toClient) {
            try {
                OutputStream out = to.getOutputStream();
                while (true) {
                    Chunk chunk = queue.take();
                    awaitDue(chunk.dueNanos());
                    awaitForwarding();
                    if (toClient && loseNextReply != FORWARD && chunk.bytes() != null) {
                        if (loseNextReply == LOSE_AND_RESET) {
                            reset();
                        } else {
                            close();
                        }
                        return;
                    }
                    if (chunk.bytes() == null) {
                        to.shutdownOutput(); // the other side closed its half: pass the FIN on
                        if (openDirections.decrementAndGet() == 0) {
                            close();
                        }
                        return;
                    }
                    out.write(chunk.bytes());
                    out.flush();
                }
            } catch (IOException e) {
                reset();
            } catch (InterruptedException e) {
                reset(); // nobody interrupts these threads; if something does, the link ends
            }
        }

        private void awaitDue(long dueNanos) {
            long wait;
            while ((wait = dueNanos - System.nanoTime()) > 0 && !client.isClosed()) {
                LockSupport.parkNanos(wait);
            }
        }

        private void awaitForwarding() throws InterruptedException {
            synchronized (gate) {
                while ((blackholed || ownBlackhole) && !client.isClosed()) {
                    gate.wait();
                }
            }
        }

        private void close() {
            links.remove(this);
            try {
                client.close();
            } catch (IOException ignored) {
                // both halves were shut down already
            }
            try {
                upstream.close();
            } catch (IOException ignored) {
                // as above
            }
        }
    }
}
